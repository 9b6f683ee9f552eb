.spyre 1
.cores 1
.dram_bytes 8448
.kernel 0 op0_op1_op2_op3_fused
.tensor arg0_1 input f16 size=16,64 stride=64,1 addr=0 bytes=2048
.tensor buf0 scratch f32 size=16,1 stride=1,16 addr=2048 bytes=64
.tensor buf1 scratch f32 size=16,64 stride=64,1 addr=2176 bytes=4096
.tensor buf2 scratch f32 size=16,1 stride=1,16 addr=6272 bytes=64
.tensor buf3 output f16 size=16,64 stride=64,1 addr=6400 bytes=2048

.core 0
.k 0
  dma.load dram=0 lx=0 bytes=512 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=512 lx=5120 bytes=512 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  dma.load dram=1024 lx=2560 bytes=512 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=1536 lx=7680 bytes=512 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  sync.wait q=sfp0 tok=4
  sfp.cvt cl=0 sdt=f16 ddt=f32 dst=512 dst_rs=64 dst_cs=1 a=0 a_rs=64 a_cs=1 rows=4 cols=64
  sfp.red cl=0 fn=rmax dt=f32 dst=0 dst_rs=1 a=512 a_rs=64 a_cs=1 rows=4 cols=64 acc=0
  sfp.bin cl=0 fn=sub dt=f32 dst=1536 dst_rs=64 dst_cs=1 a=512 a_rs=64 a_cs=1 b=0 b_rs=1 b_cs=0 rows=4 cols=64
  sfp.un cl=0 fn=exp dt=f32 dst=0 dst_rs=64 dst_cs=1 a=1536 a_rs=64 a_cs=1 rows=4 cols=64
  sfp.red cl=0 fn=sum dt=f32 dst=1024 dst_rs=1 a=0 a_rs=64 a_cs=1 rows=4 cols=64 acc=0
  sfp.bin cl=0 fn=div dt=f32 dst=1152 dst_rs=64 dst_cs=1 a=0 a_rs=64 a_cs=1 b=1024 b_rs=1 b_cs=0 rows=4 cols=64
  sfp.cvt cl=0 sdt=f32 ddt=f16 dst=0 dst_rs=64 dst_cs=1 a=1152 a_rs=64 a_cs=1 rows=4 cols=64
  sync.sig q=sfp0 tok=29 core=-1
  sync.wait q=sfp1 tok=5
  sfp.cvt cl=1 sdt=f16 ddt=f32 dst=5632 dst_rs=64 dst_cs=1 a=5120 a_rs=64 a_cs=1 rows=4 cols=64
  sfp.red cl=1 fn=rmax dt=f32 dst=5120 dst_rs=1 a=5632 a_rs=64 a_cs=1 rows=4 cols=64 acc=0
  sfp.bin cl=1 fn=sub dt=f32 dst=6656 dst_rs=64 dst_cs=1 a=5632 a_rs=64 a_cs=1 b=5120 b_rs=1 b_cs=0 rows=4 cols=64
  sfp.un cl=1 fn=exp dt=f32 dst=5120 dst_rs=64 dst_cs=1 a=6656 a_rs=64 a_cs=1 rows=4 cols=64
  sfp.red cl=1 fn=sum dt=f32 dst=6144 dst_rs=1 a=5120 a_rs=64 a_cs=1 rows=4 cols=64 acc=0
  sfp.bin cl=1 fn=div dt=f32 dst=6272 dst_rs=64 dst_cs=1 a=5120 a_rs=64 a_cs=1 b=6144 b_rs=1 b_cs=0 rows=4 cols=64
  sfp.cvt cl=1 sdt=f32 ddt=f16 dst=5120 dst_rs=64 dst_cs=1 a=6272 a_rs=64 a_cs=1 rows=4 cols=64
  sync.sig q=sfp1 tok=36 core=-1
  sync.wait q=dma_out tok=29
  dma.store lx=0 dram=6400 bytes=512 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_out tok=36
  dma.store lx=5120 dram=6912 bytes=512 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=sfp0 tok=4
  sfp.cvt cl=0 sdt=f16 ddt=f32 dst=3072 dst_rs=64 dst_cs=1 a=2560 a_rs=64 a_cs=1 rows=4 cols=64
  sfp.red cl=0 fn=rmax dt=f32 dst=2560 dst_rs=1 a=3072 a_rs=64 a_cs=1 rows=4 cols=64 acc=0
  sfp.bin cl=0 fn=sub dt=f32 dst=4096 dst_rs=64 dst_cs=1 a=3072 a_rs=64 a_cs=1 b=2560 b_rs=1 b_cs=0 rows=4 cols=64
  sfp.un cl=0 fn=exp dt=f32 dst=2560 dst_rs=64 dst_cs=1 a=4096 a_rs=64 a_cs=1 rows=4 cols=64
  sfp.red cl=0 fn=sum dt=f32 dst=3584 dst_rs=1 a=2560 a_rs=64 a_cs=1 rows=4 cols=64 acc=0
  sfp.bin cl=0 fn=div dt=f32 dst=3712 dst_rs=64 dst_cs=1 a=2560 a_rs=64 a_cs=1 b=3584 b_rs=1 b_cs=0 rows=4 cols=64
  sfp.cvt cl=0 sdt=f32 ddt=f16 dst=2560 dst_rs=64 dst_cs=1 a=3712 a_rs=64 a_cs=1 rows=4 cols=64
  sync.sig q=sfp0 tok=29 core=-1
  sync.wait q=sfp1 tok=5
  sfp.cvt cl=1 sdt=f16 ddt=f32 dst=8192 dst_rs=64 dst_cs=1 a=7680 a_rs=64 a_cs=1 rows=4 cols=64
  sfp.red cl=1 fn=rmax dt=f32 dst=7680 dst_rs=1 a=8192 a_rs=64 a_cs=1 rows=4 cols=64 acc=0
  sfp.bin cl=1 fn=sub dt=f32 dst=9216 dst_rs=64 dst_cs=1 a=8192 a_rs=64 a_cs=1 b=7680 b_rs=1 b_cs=0 rows=4 cols=64
  sfp.un cl=1 fn=exp dt=f32 dst=7680 dst_rs=64 dst_cs=1 a=9216 a_rs=64 a_cs=1 rows=4 cols=64
  sfp.red cl=1 fn=sum dt=f32 dst=8704 dst_rs=1 a=7680 a_rs=64 a_cs=1 rows=4 cols=64 acc=0
  sfp.bin cl=1 fn=div dt=f32 dst=8832 dst_rs=64 dst_cs=1 a=7680 a_rs=64 a_cs=1 b=8704 b_rs=1 b_cs=0 rows=4 cols=64
  sfp.cvt cl=1 sdt=f32 ddt=f16 dst=7680 dst_rs=64 dst_cs=1 a=8832 a_rs=64 a_cs=1 rows=4 cols=64
  sync.sig q=sfp1 tok=36 core=-1
  sync.wait q=dma_out tok=29
  dma.store lx=2560 dram=7424 bytes=512 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_out tok=36
  dma.store lx=7680 dram=7936 bytes=512 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  halt
