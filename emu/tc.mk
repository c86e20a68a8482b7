# emu/tc.mk: filled in by its module
