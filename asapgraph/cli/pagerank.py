"""``asapgraph pagerank``: the single-process driver (``--np K`` / ``mpiexec`` hand off to
:func:`asapgraph.cli.distributed.run_distributed`)."""
from __future__ import annotations

from asapgraph.cli.common import (EXIT_OK, check_output_path, dense_vector, input_summary, load_input,
                                  progress_for, wants_distributed)
from asapgraph.cli.emit import emit_results
from asapgraph.cli.options import (Formatter, add_distributed_options, add_input_options,
                                   add_iteration_options, add_output_options, alpha)
from asapgraph.errors import NotConvergedError

__all__ = ["register_pagerank", "cmd_pagerank"]


def register_pagerank(sub):
    from asapgraph.options import DEFAULTS

    DEFAULT_TOL, DEFAULT_MAX_ITER = DEFAULTS["pagerank"]

    p = sub.add_parser(
        "pagerank", help="PageRank of every vertex (networkx semantics)",
        formatter_class=Formatter,
        description="PageRank with networkx semantics: parallel edges add up, self-loops "
                    "count, the rank of dangling vertices is redistributed by the "
                    "personalization vector (or --dangling).",
        epilog="examples:\n"
               "  asapgraph pagerank datasets/rmat-12.txt.gz --top 10\n"
               "  asapgraph pagerank graph.txt.gz -o ranks.csv --json --quiet\n"
               "  asapgraph pagerank graph.txt --personalization seeds.txt --top 20\n"
               "  asapgraph pagerank rmat:20 --np 4 --mode asap --json\n")
    add_input_options(p)
    g = p.add_argument_group("PageRank options")
    g.add_argument("--alpha", type=alpha, default=0.85, metavar="A", help="damping factor")
    g.add_argument("--personalization", metavar="FILE", default=None,
                   help="teleport distribution: lines 'node value' (original ids, normalised "
                        "to sum 1; missing nodes get 0)")
    g.add_argument("--dangling", metavar="FILE", default=None,
                   help="where the rank of dangling vertices goes, same format (default: "
                        "the personalization)")
    from asapgraph.options import Given

    g.add_argument("--method", action=Given, choices=("auto", "jacobi", "gauss-seidel"),
                   default="auto",
                   help="sweep scheme of the single-process kernel")
    add_iteration_options(p, DEFAULT_TOL, DEFAULT_MAX_ITER)
    add_output_options(p, "rank")
    add_distributed_options(p)
    p.set_defaults(func=cmd_pagerank)
    return p


def cmd_pagerank(args):
    if wants_distributed(args):
        from asapgraph.cli.distributed import run_distributed

        return run_distributed(args)
    from asapgraph.kernels._graph import max_threads
    from asapgraph.programs.pagerank import pagerank

    check_output_path(args.output, args)
    prog = progress_for(args)
    load_threads = max_threads()  # --threads N caps the loading too (cli.main)
    graph, load_s = load_input(args, prog)
    if graph.weights is not None and graph.m and graph.weights.min() < 0:
        from asapgraph.options import negative_weights_error  # with the line of the first

        raise negative_weights_error(graph.source, args.input, args.weight_col,
                                     header=bool(getattr(args, "header", False)))
    pers = None if args.personalization is None else dense_vector(graph, args.personalization)
    dang = None if args.dangling is None else dense_vector(graph, args.dangling)
    prog.stage(f"pagerank: {graph.n:,} vertices, {graph.m:,} edges, alpha {args.alpha}, "
               f"tol {args.tol:g}")
    res = pagerank(graph, alpha=args.alpha, personalization=pers, dangling=dang, tol=args.tol,
                   max_iter=args.max_iter, threads=args.threads, method=args.method,
                   progress=prog)
    status = "converged" if res.converged else "NOT converged"
    prog.done(f"{status} after {res.iterations} iterations, residual {res.residual:.3e}, "
              f"{res.compute_seconds:.3f} s")
    if not res.converged and not args.allow_unconverged:
        raise NotConvergedError(
            f"PageRank did not converge: error bound {res.error_bound:.3e} > tol {args.tol:g} "
            f"after "
            f"{res.iterations} iterations (raise --max-iter or --tol, or pass "
            f"--allow-unconverged to write the results anyway)")
    summary = {
        "command": "pagerank", "input": args.input, "vertices": graph.n, "edges": graph.m,
        "weighted": graph.weights is not None, "alpha": args.alpha, "tol": args.tol,
        "max_iter": args.max_iter, "iterations": res.iterations, "converged": res.converged,
        "residual": res.residual, "error_bound": res.error_bound, "load_seconds": load_s,
        "compute_seconds": res.compute_seconds, "mode": args.mode, "engine": "single-process",
        "ranks": 1, "method": res.method, "threads": res.threads, "load_threads": load_threads,
        **input_summary(args, graph.weights is not None),
    }
    emit_results(args, res.vertices(), res.ranks, "rank", summary, score_name="score")
    return EXIT_OK

