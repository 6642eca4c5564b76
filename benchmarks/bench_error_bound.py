"""Certified ``error_bound`` against the true L1 error, and what certifying costs in sweeps.

``tol`` bounds the L1 error of the result in every mode (see README "Exact semantics");
this prints, per graph and tol, the iterations, the reported bound and the true error
against a tight reference (PageRank: a 1e-15 run; Katz at alpha = 0.5 / lambda_max: a
direct sparse solve of ``(I - alpha A^T) x = 1``).  The bound must never be below the
true error.

    python benchmarks/bench_error_bound.py rmat:14 datasets/rmat-12.txt.gz
"""
import argparse
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import asapgraph as ag
from asapgraph import programs as P


def main(specs):
    for spec in specs:
        g = ag.load_graph(spec)
        ref = ag.pagerank(g, tol=1e-15, max_iter=100000).ranks
        for tol in (1e-4, 1e-6, 1e-8):
            r = ag.pagerank(g, tol=tol)
            print(f"{spec}\tpagerank\ttol {tol:.0e}\titerations {r.iterations}\t"
                  f"bound {r.error_bound:.2e}\ttrue {np.abs(r.ranks - ref).sum():.2e}")
        M = sp.csr_matrix((np.ones(g.m), np.asarray(g.indices), np.asarray(g.indptr)),
                          shape=(g.n, g.n))
        lam = abs(sla.eigs(M, k=1, which="LM", return_eigenvectors=False)[0])
        alpha = 0.5 / lam
        x = sla.spsolve(sp.identity(g.n, format="csc") - alpha * M.tocsc(), np.ones(g.n))
        for tol in (1e-4, 1e-6, 1e-8):
            for mode in ("bsp", "asap"):
                k = P.katz(g, alpha=alpha, tol=tol, normalized=False, mode=mode)
                print(f"{spec}\tkatz {mode}\ttol {tol:.0e}\titerations {k.iterations}\t"
                      f"bound {k.stats['error_bound']:.2e}\ttrue {np.abs(k.values - x).sum():.2e}")


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="bench_error_bound.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  python benchmarks/bench_error_bound.py rmat:14 datasets/rmat-12.txt.gz")
    p.add_argument("graphs", nargs="*", default=["rmat:14"], metavar="GRAPH",
                   help="edge-list files or generator specs (default: rmat:14); output: one "
                        "tab-separated line per graph, algorithm, mode and tol")
    return p.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    try:
        main(args.graphs)
    except ag.InputError as e:  # a bad graph: one line, as the command line prints it
        print(f"bench_error_bound.py: {e}", file=sys.stderr)
        sys.exit(2)
