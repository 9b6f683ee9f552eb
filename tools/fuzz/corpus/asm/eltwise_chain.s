.spyre 1
.cores 1
.dram_bytes 132096
.kernel 0 op0_pointwise
.tensor arg0_1 input f16 size=64,512 stride=512,1 addr=0 bytes=65536
.tensor arg1_1 input f16 size=512 stride=1 addr=65536 bytes=1024
.tensor buf0 output f16 size=64,512 stride=512,1 addr=66560 bytes=65536

.core 0
.k 0
  sfp.fill cl=0 dt=f32 dst=0 dst_rs=0 dst_cs=0 rows=1 cols=1 value=2
  sync.sig q=sfp0 tok=33 core=-1
  dma.load dram=65536 lx=128 bytes=1024 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  sync.wait q=sfp0 tok=4
  sfp.cvt cl=0 sdt=f16 ddt=f32 dst=1152 dst_rs=0 dst_cs=1 a=128 a_rs=0 a_cs=1 rows=1 cols=512
  sync.sig q=sfp0 tok=33 core=-1
  dma.load dram=0 lx=3200 bytes=16384 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=16384 lx=232576 bytes=16384 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  dma.load dram=32768 lx=117888 bytes=16384 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=4 core=-1
  dma.load dram=49152 lx=347264 bytes=16384 rows=1 dram_stride=0 lx_stride=0 reps=1 dram_rep=0 lx_rep=0 outer=1 dram_outer=0 lx_outer=0 mcast=0 mtok=-1
  sync.sig q=dma_in tok=5 core=-1
  sync.wait q=sfp0 tok=4
  sfp.cvt cl=0 sdt=f16 ddt=f32 dst=19584 dst_rs=512 dst_cs=1 a=3200 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.bin cl=0 fn=mul dt=f32 dst=52352 dst_rs=512 dst_cs=1 a=19584 a_rs=512 a_cs=1 b=0 b_rs=0 b_cs=0 rows=16 cols=512
  sfp.bin cl=0 fn=add dt=f32 dst=85120 dst_rs=512 dst_cs=1 a=52352 a_rs=512 a_cs=1 b=1152 b_rs=0 b_cs=1 rows=16 cols=512
  sfp.un cl=0 fn=relu dt=f32 dst=52352 dst_rs=512 dst_cs=1 a=85120 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.un cl=0 fn=exp dt=f32 dst=85120 dst_rs=512 dst_cs=1 a=52352 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.bin cl=0 fn=sub dt=f32 dst=52352 dst_rs=512 dst_cs=1 a=85120 a_rs=512 a_cs=1 b=19584 b_rs=512 b_cs=1 rows=16 cols=512
  sfp.cvt cl=0 sdt=f32 ddt=f16 dst=3200 dst_rs=512 dst_cs=1 a=52352 a_rs=512 a_cs=1 rows=16 cols=512
  sync.sig q=sfp0 tok=29 core=-1
  sync.wait q=sfp1 tok=5
  sfp.cvt cl=1 sdt=f16 ddt=f32 dst=248960 dst_rs=512 dst_cs=1 a=232576 a_rs=512 a_cs=1 rows=16 cols=512
  sync.wait q=sfp1 tok=33
  sfp.bin cl=1 fn=mul dt=f32 dst=281728 dst_rs=512 dst_cs=1 a=248960 a_rs=512 a_cs=1 b=0 b_rs=0 b_cs=0 rows=16 cols=512
  sync.wait q=sfp1 tok=33
  sfp.bin cl=1 fn=add dt=f32 dst=314496 dst_rs=512 dst_cs=1 a=281728 a_rs=512 a_cs=1 b=1152 b_rs=0 b_cs=1 rows=16 cols=512
  sfp.un cl=1 fn=relu dt=f32 dst=281728 dst_rs=512 dst_cs=1 a=314496 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.un cl=1 fn=exp dt=f32 dst=314496 dst_rs=512 dst_cs=1 a=281728 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.bin cl=1 fn=sub dt=f32 dst=281728 dst_rs=512 dst_cs=1 a=314496 a_rs=512 a_cs=1 b=248960 b_rs=512 b_cs=1 rows=16 cols=512
  sfp.cvt cl=1 sdt=f32 ddt=f16 dst=232576 dst_rs=512 dst_cs=1 a=281728 a_rs=512 a_cs=1 rows=16 cols=512
  sync.sig q=sfp1 tok=36 core=-1
  sync.wait q=dma_out tok=29
  dma.store lx=3200 dram=66560 bytes=16384 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_out tok=36
  dma.store lx=232576 dram=82944 bytes=16384 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=sfp0 tok=4
  sfp.cvt cl=0 sdt=f16 ddt=f32 dst=134272 dst_rs=512 dst_cs=1 a=117888 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.bin cl=0 fn=mul dt=f32 dst=167040 dst_rs=512 dst_cs=1 a=134272 a_rs=512 a_cs=1 b=0 b_rs=0 b_cs=0 rows=16 cols=512
  sfp.bin cl=0 fn=add dt=f32 dst=199808 dst_rs=512 dst_cs=1 a=167040 a_rs=512 a_cs=1 b=1152 b_rs=0 b_cs=1 rows=16 cols=512
  sfp.un cl=0 fn=relu dt=f32 dst=167040 dst_rs=512 dst_cs=1 a=199808 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.un cl=0 fn=exp dt=f32 dst=199808 dst_rs=512 dst_cs=1 a=167040 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.bin cl=0 fn=sub dt=f32 dst=167040 dst_rs=512 dst_cs=1 a=199808 a_rs=512 a_cs=1 b=134272 b_rs=512 b_cs=1 rows=16 cols=512
  sfp.cvt cl=0 sdt=f32 ddt=f16 dst=117888 dst_rs=512 dst_cs=1 a=167040 a_rs=512 a_cs=1 rows=16 cols=512
  sync.sig q=sfp0 tok=29 core=-1
  sync.wait q=sfp1 tok=5
  sfp.cvt cl=1 sdt=f16 ddt=f32 dst=363648 dst_rs=512 dst_cs=1 a=347264 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.bin cl=1 fn=mul dt=f32 dst=396416 dst_rs=512 dst_cs=1 a=363648 a_rs=512 a_cs=1 b=0 b_rs=0 b_cs=0 rows=16 cols=512
  sfp.bin cl=1 fn=add dt=f32 dst=429184 dst_rs=512 dst_cs=1 a=396416 a_rs=512 a_cs=1 b=1152 b_rs=0 b_cs=1 rows=16 cols=512
  sfp.un cl=1 fn=relu dt=f32 dst=396416 dst_rs=512 dst_cs=1 a=429184 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.un cl=1 fn=exp dt=f32 dst=429184 dst_rs=512 dst_cs=1 a=396416 a_rs=512 a_cs=1 rows=16 cols=512
  sfp.bin cl=1 fn=sub dt=f32 dst=396416 dst_rs=512 dst_cs=1 a=429184 a_rs=512 a_cs=1 b=363648 b_rs=512 b_cs=1 rows=16 cols=512
  sfp.cvt cl=1 sdt=f32 ddt=f16 dst=347264 dst_rs=512 dst_cs=1 a=396416 a_rs=512 a_cs=1 rows=16 cols=512
  sync.sig q=sfp1 tok=36 core=-1
  sync.wait q=dma_out tok=29
  dma.store lx=117888 dram=99328 bytes=16384 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  sync.wait q=dma_out tok=36
  dma.store lx=347264 dram=115712 bytes=16384 rows=1 lx_stride=0 dram_stride=0 reps=1 lx_rep=0 dram_rep=0 outer=1 lx_outer=0 dram_outer=0
  halt
