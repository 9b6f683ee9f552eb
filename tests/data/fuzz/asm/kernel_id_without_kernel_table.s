.spyre 1
.cores 1
.dram_bytes 8448
;kernel 0 8¾.tensor buíf0 out f16 size=-1,64 stride=64

.core 0
  loop count=4 len=1
       dma.load dram=0 lx=8198 bytes=64
; `d r=5ouet