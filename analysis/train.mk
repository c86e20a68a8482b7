# analysis/train.mk: filled in by its module
