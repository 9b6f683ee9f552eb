; hand-written seed: two cores, nested hardware loops with steps, a data segment, a float fill
.spyre 1
.cores 2
.dram_bytes 8192
.kernel 0 fill_and_copy
.kernel 1 reduce
.tensor x input f16 size=32,64 stride=64,1 addr=0 bytes=4096
.tensor y output f32 size=32 stride=1 addr=4096 bytes=128
.data 6144 00013c0000400042
.core 0
.k 0
  sfp.fill cl=0 dt=f32 dst=0 dst_rs=32 dst_cs=1 rows=1 cols=32 value=-1.5e-3
  loop count=4 len=5
    loop.step i=0 o=1 delta=1024
    loop.step i=0 o=0 delta=1024
    dma.load dram=0 lx=8192 bytes=1024
    sync.sig q=sfp0 tok=1
    loop count=2 len=1
      loop.step i=0 o=4 delta=16
      sfp.un cl=0 fn=exp dt=f16 dst=16384 dst_rs=64 dst_cs=1 a=8192 a_rs=64 a_cs=1 rows=8 cols=64
  barrier
.k 1
  sync.wait q=sfp0 tok=1
  sfp.red cl=0 fn=sum dt=f32 dst=0 dst_rs=1 a=16384 a_rs=64 a_cs=1 rows=8 cols=64
  dma.store lx=0 dram=4096 bytes=128
  halt
.core 1
.k 0
  barrier
  halt
