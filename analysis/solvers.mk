# analysis/solvers.mk: filled in by its module
