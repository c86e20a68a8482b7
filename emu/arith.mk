# emu/arith.mk: filled in by its module
