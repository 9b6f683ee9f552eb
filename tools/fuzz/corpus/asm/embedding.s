.spyre 1
.cores 1
.dram_bytes 11008
.kernel 0 op0_embedding
.tensor arg0_1 parameter f16 size=100,32 stride=32,1 addr=0 bytes=6400
.tensor arg1_1 input i64 size=4,16 stride=16,1 addr=6400 bytes=512
.tensor buf0 output f16 size=4,16,32 stride=512,32,1 addr=6912 bytes=4096

.core 0
.k 0
  sfp.fill cl=0 dt=i64 dst=0 dst_rs=0 dst_cs=0 rows=1 cols=1 value=0
  sync.sig q=sfp0 tok=33 core=-1
  sfp.fill cl=0 dt=i64 dst=128 dst_rs=0 dst_cs=0 rows=1 cols=1 value=100
  sync.sig q=sfp0 tok=33 core=-1
  sfp.fill cl=0 dt=i64 dst=256 dst_rs=0 dst_cs=0 rows=1 cols=1 value=32
  sync.sig q=sfp0 tok=33 core=-1
  sfp.fill cl=0 dt=i64 dst=384 dst_rs=0 dst_cs=0 rows=1 cols=1 value=0
  sync.sig q=sfp0 tok=33 core=-1
  dma.load dram=6400 lx=768 bytes=128 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=6528 lx=3328 bytes=128 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  dma.load dram=6656 lx=2048 bytes=128 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=6784 lx=4608 bytes=128 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  sync.wait q=sfp0 tok=4
  sfp.bin cl=0 fn=lt dt=i64 dst=896 dst_rs=1 dst_cs=0 a=768 a_rs=1 a_cs=0 b=0 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.bin cl=0 fn=add dt=i64 dst=1024 dst_rs=1 dst_cs=0 a=768 a_rs=1 a_cs=0 b=128 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.sel cl=0 dt=i64 dst=1152 dst_rs=1 dst_cs=0 c=896 c_rs=1 c_cs=0 a=1024 a_rs=1 a_cs=0 b=768 b_rs=1 b_cs=0 rows=16 cols=1
  sfp.bin cl=0 fn=mul dt=i64 dst=768 dst_rs=1 dst_cs=0 a=1152 a_rs=1 a_cs=0 b=256 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.bin cl=0 fn=add dt=i64 dst=896 dst_rs=1 dst_cs=0 a=768 a_rs=1 a_cs=0 b=384 b_rs=0 b_cs=0 rows=16 cols=1
  sync.sig q=sfp0 tok=28 core=-1
  sync.wait q=dma_in tok=28
  dma.gather dram=0 lx=1024 idx=896 n=16 bytes=64 dram_stride=2 lx_stride=64 limit=3169 idt=5
  sync.sig q=dma_in tok=1 core=-1
  sync.wait q=sfp1 tok=5
  sync.wait q=sfp1 tok=33
  sfp.bin cl=1 fn=lt dt=i64 dst=3456 dst_rs=1 dst_cs=0 a=3328 a_rs=1 a_cs=0 b=0 b_rs=0 b_cs=0 rows=16 cols=1
  sync.wait q=sfp1 tok=33
  sfp.bin cl=1 fn=add dt=i64 dst=3584 dst_rs=1 dst_cs=0 a=3328 a_rs=1 a_cs=0 b=128 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.sel cl=1 dt=i64 dst=3712 dst_rs=1 dst_cs=0 c=3456 c_rs=1 c_cs=0 a=3584 a_rs=1 a_cs=0 b=3328 b_rs=1 b_cs=0 rows=16 cols=1
  sync.wait q=sfp1 tok=33
  sfp.bin cl=1 fn=mul dt=i64 dst=3328 dst_rs=1 dst_cs=0 a=3712 a_rs=1 a_cs=0 b=256 b_rs=0 b_cs=0 rows=16 cols=1
  sync.wait q=sfp1 tok=33
  sfp.bin cl=1 fn=add dt=i64 dst=3456 dst_rs=1 dst_cs=0 a=3328 a_rs=1 a_cs=0 b=384 b_rs=0 b_cs=0 rows=16 cols=1
  sync.sig q=sfp1 tok=35 core=-1
  sync.wait q=dma_in tok=35
  dma.gather dram=0 lx=3584 idx=3456 n=16 bytes=64 dram_stride=2 lx_stride=64 limit=3169 idt=5
  sync.sig q=dma_in tok=1 core=-1
  sync.wait q=dma_out tok=1
  dma.store lx=1024 dram=6912 bytes=1024 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_out tok=1
  dma.store lx=3584 dram=7936 bytes=1024 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=sfp0 tok=4
  sfp.bin cl=0 fn=lt dt=i64 dst=2176 dst_rs=1 dst_cs=0 a=2048 a_rs=1 a_cs=0 b=0 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.bin cl=0 fn=add dt=i64 dst=2304 dst_rs=1 dst_cs=0 a=2048 a_rs=1 a_cs=0 b=128 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.sel cl=0 dt=i64 dst=2432 dst_rs=1 dst_cs=0 c=2176 c_rs=1 c_cs=0 a=2304 a_rs=1 a_cs=0 b=2048 b_rs=1 b_cs=0 rows=16 cols=1
  sfp.bin cl=0 fn=mul dt=i64 dst=2048 dst_rs=1 dst_cs=0 a=2432 a_rs=1 a_cs=0 b=256 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.bin cl=0 fn=add dt=i64 dst=2176 dst_rs=1 dst_cs=0 a=2048 a_rs=1 a_cs=0 b=384 b_rs=0 b_cs=0 rows=16 cols=1
  sync.sig q=sfp0 tok=28 core=-1
  sync.wait q=dma_in tok=28
  dma.gather dram=0 lx=2304 idx=2176 n=16 bytes=64 dram_stride=2 lx_stride=64 limit=3169 idt=5
  sync.sig q=dma_in tok=1 core=-1
  sync.wait q=sfp1 tok=5
  sfp.bin cl=1 fn=lt dt=i64 dst=4736 dst_rs=1 dst_cs=0 a=4608 a_rs=1 a_cs=0 b=0 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.bin cl=1 fn=add dt=i64 dst=4864 dst_rs=1 dst_cs=0 a=4608 a_rs=1 a_cs=0 b=128 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.sel cl=1 dt=i64 dst=4992 dst_rs=1 dst_cs=0 c=4736 c_rs=1 c_cs=0 a=4864 a_rs=1 a_cs=0 b=4608 b_rs=1 b_cs=0 rows=16 cols=1
  sfp.bin cl=1 fn=mul dt=i64 dst=4608 dst_rs=1 dst_cs=0 a=4992 a_rs=1 a_cs=0 b=256 b_rs=0 b_cs=0 rows=16 cols=1
  sfp.bin cl=1 fn=add dt=i64 dst=4736 dst_rs=1 dst_cs=0 a=4608 a_rs=1 a_cs=0 b=384 b_rs=0 b_cs=0 rows=16 cols=1
  sync.sig q=sfp1 tok=35 core=-1
  sync.wait q=dma_in tok=35
  dma.gather dram=0 lx=4864 idx=4736 n=16 bytes=64 dram_stride=2 lx_stride=64 limit=3169 idt=5
  sync.sig q=dma_in tok=1 core=-1
  sync.wait q=dma_out tok=1
  dma.store lx=2304 dram=8960 bytes=1024 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_out tok=1
  dma.store lx=4864 dram=9984 bytes=1024 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  halt
