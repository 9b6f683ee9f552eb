.spyre 1
.cores 1
.dram_bytes 212992
.kernel 0 op0_mm
.tensor arg0_1 input f16 size=128,256 stride=256,1 addr=0 bytes=65536
.tensor arg1_1 input f16 size=256,192 stride=192,1 addr=65536 bytes=98304
.tensor buf0 output f16 size=128,192 stride=192,1 addr=163840 bytes=49152

.core 0
.k 0
  dma.load dram=0 lx=0 bytes=256 rows=64 dram_stride=512 lx_stride=256 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  dma.load dram=65536 lx=16384 bytes=49152 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=2 core=-1
  sync.sig q=dma_in tok=3 core=-1
  dma.load dram=256 lx=65536 bytes=256 rows=64 dram_stride=512 lx_stride=256 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  dma.load dram=114688 lx=81920 bytes=49152 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=2 core=-1
  sync.sig q=dma_in tok=3 core=-1
  sync.wait q=pt0 tok=2
  pt.mm cl=0 a=0 b=16384 c=131072 m=32 n=192 k=128 lda=128 ldb=192 ldc=192 dt=f16 flags=0
  sync.sig q=pt0 tok=14 core=-1
  sync.wait q=pt1 tok=3
  pt.mm cl=1 a=8192 b=16384 c=155648 m=32 n=192 k=128 lda=128 ldb=192 ldc=192 dt=f16 flags=0
  sync.sig q=pt1 tok=21 core=-1
  sync.wait q=dma_in tok=14
  sync.wait q=dma_in tok=21
  dma.load dram=32768 lx=0 bytes=256 rows=64 dram_stride=512 lx_stride=256 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=2 core=-1
  sync.sig q=dma_in tok=3 core=-1
  sync.wait q=pt0 tok=2
  pt.mm cl=0 a=65536 b=81920 c=131072 m=32 n=192 k=128 lda=128 ldb=192 ldc=192 dt=f16 flags=1
  sync.sig q=pt0 tok=18 core=-1
  sync.sig q=pt0 tok=14 core=-1
  sync.wait q=pt1 tok=3
  pt.mm cl=1 a=73728 b=81920 c=155648 m=32 n=192 k=128 lda=128 ldb=192 ldc=192 dt=f16 flags=1
  sync.sig q=pt1 tok=26 core=-1
  sync.sig q=pt1 tok=21 core=-1
  sync.wait q=sfp0 tok=18
  sfp.cvt cl=0 sdt=f32 ddt=f16 dst=180224 dst_rs=192 dst_cs=1 a=131072 a_rs=192 a_cs=1 rows=32 cols=192
  sync.sig q=sfp0 tok=29 core=-1
  sync.wait q=dma_out tok=29
  dma.store lx=180224 dram=163840 bytes=12288 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=sfp1 tok=26
  sfp.cvt cl=1 sdt=f32 ddt=f16 dst=192512 dst_rs=192 dst_cs=1 a=155648 a_rs=192 a_cs=1 rows=32 cols=192
  sync.sig q=sfp1 tok=36 core=-1
  sync.wait q=dma_out tok=36
  dma.store lx=192512 dram=176128 bytes=12288 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_in tok=14
  sync.wait q=dma_in tok=21
  dma.load dram=33024 lx=65536 bytes=256 rows=64 dram_stride=512 lx_stride=256 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=2 core=-1
  sync.sig q=dma_in tok=3 core=-1
  sync.wait q=pt0 tok=2
  pt.mm cl=0 a=0 b=16384 c=204800 m=32 n=192 k=128 lda=128 ldb=192 ldc=192 dt=f16 flags=0
  sync.wait q=pt1 tok=3
  pt.mm cl=1 a=8192 b=16384 c=229376 m=32 n=192 k=128 lda=128 ldb=192 ldc=192 dt=f16 flags=0
  sync.wait q=pt0 tok=2
  pt.mm cl=0 a=65536 b=81920 c=204800 m=32 n=192 k=128 lda=128 ldb=192 ldc=192 dt=f16 flags=1
  sync.sig q=pt0 tok=18 core=-1
  sync.wait q=pt1 tok=3
  pt.mm cl=1 a=73728 b=81920 c=229376 m=32 n=192 k=128 lda=128 ldb=192 ldc=192 dt=f16 flags=1
  sync.sig q=pt1 tok=26 core=-1
  sync.wait q=sfp0 tok=18
  sfp.cvt cl=0 sdt=f32 ddt=f16 dst=253952 dst_rs=192 dst_cs=1 a=204800 a_rs=192 a_cs=1 rows=32 cols=192
  sync.sig q=sfp0 tok=29 core=-1
  sync.wait q=dma_out tok=29
  dma.store lx=253952 dram=188416 bytes=12288 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=sfp1 tok=26
  sfp.cvt cl=1 sdt=f32 ddt=f16 dst=266240 dst_rs=192 dst_cs=1 a=229376 a_rs=192 a_cs=1 rows=32 cols=192
  sync.sig q=sfp1 tok=36 core=-1
  sync.wait q=dma_out tok=36
  dma.store lx=266240 dram=200704 bytes=12288 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  halt
