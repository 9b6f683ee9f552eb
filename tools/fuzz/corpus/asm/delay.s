.spyre 1
.cores 1
.dram_bytes 6144
.kernel 0 op0_add
.tensor arg0_1 input f16 size=16,64 stride=64,1 addr=0 bytes=2048
.tensor arg1_1 input f16 size=16,64 stride=64,1 addr=2048 bytes=2048
.tensor buf0 output f16 size=16,64 stride=64,1 addr=4096 bytes=2048

.core 0
.k 0
  sync.delay cycles=600
  dma.load dram=0 lx=0 bytes=1024 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=2048 lx=1024 bytes=1024 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=1024 lx=12288 bytes=1024 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  dma.load dram=3072 lx=13312 bytes=1024 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  sync.wait q=sfp0 tok=4
  sfp.cvt cl=0 sdt=f16 ddt=f32 dst=2048 dst_rs=512 dst_cs=1 a=0 a_rs=512 a_cs=1 rows=1 cols=512
  sync.wait q=sfp0 tok=4
  sfp.cvt cl=0 sdt=f16 ddt=f32 dst=4096 dst_rs=512 dst_cs=1 a=1024 a_rs=512 a_cs=1 rows=1 cols=512
  sfp.bin cl=0 fn=add dt=f32 dst=0 dst_rs=512 dst_cs=1 a=2048 a_rs=512 a_cs=1 b=4096 b_rs=512 b_cs=1 rows=1 cols=512
  sfp.cvt cl=0 sdt=f32 ddt=f16 dst=2048 dst_rs=512 dst_cs=1 a=0 a_rs=512 a_cs=1 rows=1 cols=512
  sync.sig q=sfp0 tok=29 core=-1
  sync.wait q=sfp1 tok=5
  sfp.cvt cl=1 sdt=f16 ddt=f32 dst=14336 dst_rs=512 dst_cs=1 a=12288 a_rs=512 a_cs=1 rows=1 cols=512
  sync.wait q=sfp1 tok=5
  sfp.cvt cl=1 sdt=f16 ddt=f32 dst=16384 dst_rs=512 dst_cs=1 a=13312 a_rs=512 a_cs=1 rows=1 cols=512
  sfp.bin cl=1 fn=add dt=f32 dst=12288 dst_rs=512 dst_cs=1 a=14336 a_rs=512 a_cs=1 b=16384 b_rs=512 b_cs=1 rows=1 cols=512
  sfp.cvt cl=1 sdt=f32 ddt=f16 dst=14336 dst_rs=512 dst_cs=1 a=12288 a_rs=512 a_cs=1 rows=1 cols=512
  sync.sig q=sfp1 tok=36 core=-1
  sync.wait q=dma_out tok=29
  dma.store lx=2048 dram=4096 bytes=1024 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_out tok=36
  dma.store lx=14336 dram=5120 bytes=1024 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  halt
