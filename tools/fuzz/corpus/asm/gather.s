.spyre 1
.cores 1
.dram_bytes 3328
.kernel 0 op0_gather
.tensor arg0_1 input f16 size=16,64 stride=64,1 addr=0 bytes=2048
.tensor arg1_1 input i64 size=16,8 stride=8,1 addr=2048 bytes=1024
.tensor buf0 output f16 size=16,8 stride=8,1 addr=3072 bytes=256

.core 0
.k 0
  sfp.fill cl=0 dt=i64 dst=0 dst_rs=0 dst_cs=0 rows=1 cols=1 value=0
  sync.sig q=sfp0 tok=33 core=-1
  sfp.fill cl=0 dt=i64 dst=128 dst_rs=0 dst_cs=0 rows=1 cols=1 value=64
  sync.sig q=sfp0 tok=33 core=-1
  dma.load dram=2048 lx=512 bytes=256 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=2304 lx=2304 bytes=256 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  dma.load dram=2560 lx=1408 bytes=256 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=2816 lx=3200 bytes=256 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  sync.wait q=sfp0 tok=4
  sfp.bin cl=0 fn=lt dt=i64 dst=768 dst_rs=8 dst_cs=1 a=512 a_rs=8 a_cs=1 b=0 b_rs=0 b_cs=0 rows=4 cols=8
  sfp.bin cl=0 fn=add dt=i64 dst=896 dst_rs=8 dst_cs=1 a=512 a_rs=8 a_cs=1 b=128 b_rs=0 b_cs=0 rows=4 cols=8
  sfp.sel cl=0 dt=i64 dst=1152 dst_rs=8 dst_cs=1 c=768 c_rs=8 c_cs=1 a=896 a_rs=8 a_cs=1 b=512 b_rs=8 b_cs=1 rows=4 cols=8
  sfp.fill cl=0 dt=i64 dst=512 dst_rs=1 dst_cs=0 rows=1 cols=1 value=0
  sfp.fill cl=0 dt=i64 dst=256 dst_rs=0 dst_cs=0 rows=1 cols=1 value=64
  sfp.bin cl=0 fn=add dt=i64 dst=520 dst_rs=1 dst_cs=0 a=512 a_rs=1 a_cs=0 b=256 b_rs=0 b_cs=0 rows=1 cols=1
  sfp.fill cl=0 dt=i64 dst=256 dst_rs=0 dst_cs=0 rows=1 cols=1 value=128
  sfp.bin cl=0 fn=add dt=i64 dst=528 dst_rs=1 dst_cs=0 a=512 a_rs=1 a_cs=0 b=256 b_rs=0 b_cs=0 rows=2 cols=1
  sfp.bin cl=0 fn=add dt=i64 dst=640 dst_rs=8 dst_cs=1 a=1152 a_rs=8 a_cs=1 b=512 b_rs=1 b_cs=0 rows=4 cols=8
  sync.sig q=sfp0 tok=28 core=-1
  sync.wait q=dma_in tok=28
  dma.gather dram=0 lx=512 idx=640 n=32 bytes=2 dram_stride=2 lx_stride=2 limit=1024 idt=5
  sync.sig q=dma_in tok=1 core=-1
  sync.wait q=sfp1 tok=5
  sync.wait q=sfp1 tok=33
  sfp.bin cl=1 fn=lt dt=i64 dst=2560 dst_rs=8 dst_cs=1 a=2304 a_rs=8 a_cs=1 b=0 b_rs=0 b_cs=0 rows=4 cols=8
  sync.wait q=sfp1 tok=33
  sfp.bin cl=1 fn=add dt=i64 dst=2688 dst_rs=8 dst_cs=1 a=2304 a_rs=8 a_cs=1 b=128 b_rs=0 b_cs=0 rows=4 cols=8
  sfp.sel cl=1 dt=i64 dst=2944 dst_rs=8 dst_cs=1 c=2560 c_rs=8 c_cs=1 a=2688 a_rs=8 a_cs=1 b=2304 b_rs=8 b_cs=1 rows=4 cols=8
  sfp.fill cl=1 dt=i64 dst=2304 dst_rs=1 dst_cs=0 rows=1 cols=1 value=256
  sfp.fill cl=1 dt=i64 dst=384 dst_rs=0 dst_cs=0 rows=1 cols=1 value=64
  sfp.bin cl=1 fn=add dt=i64 dst=2312 dst_rs=1 dst_cs=0 a=2304 a_rs=1 a_cs=0 b=384 b_rs=0 b_cs=0 rows=1 cols=1
  sfp.fill cl=1 dt=i64 dst=384 dst_rs=0 dst_cs=0 rows=1 cols=1 value=128
  sfp.bin cl=1 fn=add dt=i64 dst=2320 dst_rs=1 dst_cs=0 a=2304 a_rs=1 a_cs=0 b=384 b_rs=0 b_cs=0 rows=2 cols=1
  sfp.bin cl=1 fn=add dt=i64 dst=2432 dst_rs=8 dst_cs=1 a=2944 a_rs=8 a_cs=1 b=2304 b_rs=1 b_cs=0 rows=4 cols=8
  sync.sig q=sfp1 tok=35 core=-1
  sync.wait q=dma_in tok=35
  dma.gather dram=0 lx=2304 idx=2432 n=32 bytes=2 dram_stride=2 lx_stride=2 limit=1024 idt=5
  sync.sig q=dma_in tok=1 core=-1
  sync.wait q=dma_out tok=1
  dma.store lx=512 dram=3072 bytes=64 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_out tok=1
  dma.store lx=2304 dram=3136 bytes=64 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=sfp0 tok=4
  sfp.bin cl=0 fn=lt dt=i64 dst=1664 dst_rs=8 dst_cs=1 a=1408 a_rs=8 a_cs=1 b=0 b_rs=0 b_cs=0 rows=4 cols=8
  sfp.bin cl=0 fn=add dt=i64 dst=1792 dst_rs=8 dst_cs=1 a=1408 a_rs=8 a_cs=1 b=128 b_rs=0 b_cs=0 rows=4 cols=8
  sfp.sel cl=0 dt=i64 dst=2048 dst_rs=8 dst_cs=1 c=1664 c_rs=8 c_cs=1 a=1792 a_rs=8 a_cs=1 b=1408 b_rs=8 b_cs=1 rows=4 cols=8
  sfp.fill cl=0 dt=i64 dst=1408 dst_rs=1 dst_cs=0 rows=1 cols=1 value=512
  sfp.fill cl=0 dt=i64 dst=256 dst_rs=0 dst_cs=0 rows=1 cols=1 value=64
  sfp.bin cl=0 fn=add dt=i64 dst=1416 dst_rs=1 dst_cs=0 a=1408 a_rs=1 a_cs=0 b=256 b_rs=0 b_cs=0 rows=1 cols=1
  sfp.fill cl=0 dt=i64 dst=256 dst_rs=0 dst_cs=0 rows=1 cols=1 value=128
  sfp.bin cl=0 fn=add dt=i64 dst=1424 dst_rs=1 dst_cs=0 a=1408 a_rs=1 a_cs=0 b=256 b_rs=0 b_cs=0 rows=2 cols=1
  sfp.bin cl=0 fn=add dt=i64 dst=1536 dst_rs=8 dst_cs=1 a=2048 a_rs=8 a_cs=1 b=1408 b_rs=1 b_cs=0 rows=4 cols=8
  sync.sig q=sfp0 tok=28 core=-1
  sync.wait q=dma_in tok=28
  dma.gather dram=0 lx=1408 idx=1536 n=32 bytes=2 dram_stride=2 lx_stride=2 limit=1024 idt=5
  sync.sig q=dma_in tok=1 core=-1
  sync.wait q=sfp1 tok=5
  sfp.bin cl=1 fn=lt dt=i64 dst=3456 dst_rs=8 dst_cs=1 a=3200 a_rs=8 a_cs=1 b=0 b_rs=0 b_cs=0 rows=4 cols=8
  sfp.bin cl=1 fn=add dt=i64 dst=3584 dst_rs=8 dst_cs=1 a=3200 a_rs=8 a_cs=1 b=128 b_rs=0 b_cs=0 rows=4 cols=8
  sfp.sel cl=1 dt=i64 dst=3840 dst_rs=8 dst_cs=1 c=3456 c_rs=8 c_cs=1 a=3584 a_rs=8 a_cs=1 b=3200 b_rs=8 b_cs=1 rows=4 cols=8
  sfp.fill cl=1 dt=i64 dst=3200 dst_rs=1 dst_cs=0 rows=1 cols=1 value=768
  sfp.fill cl=1 dt=i64 dst=384 dst_rs=0 dst_cs=0 rows=1 cols=1 value=64
  sfp.bin cl=1 fn=add dt=i64 dst=3208 dst_rs=1 dst_cs=0 a=3200 a_rs=1 a_cs=0 b=384 b_rs=0 b_cs=0 rows=1 cols=1
  sfp.fill cl=1 dt=i64 dst=384 dst_rs=0 dst_cs=0 rows=1 cols=1 value=128
  sfp.bin cl=1 fn=add dt=i64 dst=3216 dst_rs=1 dst_cs=0 a=3200 a_rs=1 a_cs=0 b=384 b_rs=0 b_cs=0 rows=2 cols=1
  sfp.bin cl=1 fn=add dt=i64 dst=3328 dst_rs=8 dst_cs=1 a=3840 a_rs=8 a_cs=1 b=3200 b_rs=1 b_cs=0 rows=4 cols=8
  sync.sig q=sfp1 tok=35 core=-1
  sync.wait q=dma_in tok=35
  dma.gather dram=0 lx=3200 idx=3328 n=32 bytes=2 dram_stride=2 lx_stride=2 limit=1024 idt=5
  sync.sig q=dma_in tok=1 core=-1
  sync.wait q=dma_out tok=1
  dma.store lx=1408 dram=3200 bytes=64 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_out tok=1
  dma.store lx=3200 dram=3264 bytes=64 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  halt
