.spyre 1
.cores 1
.dram_bytes 2176
.kernel 0 op0_argmax
.tensor arg0_1 input f16 size=16,64 stride=64,1 addr=0 bytes=2048
.tensor buf0 output i64 size=16 stride=1 addr=2048 bytes=128

.core 0
.k 0
  dma.load dram=0 lx=0 bytes=1024 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=1024 lx=6144 bytes=1024 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  sync.wait q=sfp0 tok=4
  sfp.cvt cl=0 sdt=f16 ddt=f32 dst=1024 dst_rs=64 dst_cs=1 a=0 a_rs=64 a_cs=1 rows=8 cols=64
  sfp.red cl=0 fn=argmax dt=f32 dst=0 dst_rs=1 a=1024 a_rs=64 a_cs=1 rows=8 cols=64 acc=0
  sfp.cvt cl=0 sdt=f32 ddt=i64 dst=12288 dst_rs=1 dst_cs=0 a=0 a_rs=1 a_cs=0 rows=8 cols=1
  sync.sig q=sfp0 tok=29 core=-1
  sync.wait q=sfp1 tok=5
  sfp.cvt cl=1 sdt=f16 ddt=f32 dst=7168 dst_rs=64 dst_cs=1 a=6144 a_rs=64 a_cs=1 rows=8 cols=64
  sfp.red cl=1 fn=argmax dt=f32 dst=6144 dst_rs=1 a=7168 a_rs=64 a_cs=1 rows=8 cols=64 acc=0
  sfp.cvt cl=1 sdt=f32 ddt=i64 dst=12352 dst_rs=1 dst_cs=0 a=6144 a_rs=1 a_cs=0 rows=8 cols=1
  sync.sig q=sfp1 tok=36 core=-1
  sync.wait q=dma_out tok=29
  sync.wait q=dma_out tok=36
  dma.store lx=12288 dram=2048 bytes=128 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  halt
