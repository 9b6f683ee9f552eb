.spyre 1
.cores 2
.dram_bytes 256
.kernel 0 start_up
.tensor out output f16 size=2,64 stride=64,1 addr=0 bytes=256

.core 0
.k 0
  sync.delay cycles=600
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1.5
  sync.sig q=sfp0 tok=0
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=0 bytes=128
  halt
.core 1
.k 0
  sync.delay cycles=0
  sfp.fill cl=1 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=-2
  sync.sig q=sfp1 tok=0
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=128 bytes=128
  halt
