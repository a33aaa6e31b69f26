"""params.py — a model's parameters as the run used them: the attributes of /model/<model>.

    kappa = params.value(run, "kappa")                            # a float
    dhat, dp, da = params.values(run, "dhat", "dhat_p", "dhat_a")
    quad = params.choice(run, "quadrature", "vertex")             # a choice, as its string

A run file holds every parameter of its model as the model runs with it (run.params); those the
scene left "auto" are the numbers the model's init resolved, their names listed in the group's
string attribute "auto" (the resolved scene, root attribute scene_json, keeps the string "auto").
The analyses read these numbers and do not re-derive the models' rules. In particular:
  kappa          κ at the start of the run (auto: kappa_scale × the smallest Young's modulus); an
                 auto κ may be doubled during the run: /model/<model>/kappa logs it per step
  ipc_adhesion   dhat_a, dhat_p, s_p (= dhat_p/dhat_a) and eps_a; NaN when adhesion is off (eps_c = 0);
                 young_obstacle stays NaN when auto (its rule is per pair)
  rcc_ipc        bond_dist, debond_dist and its IPC parameters
A run file written before the resolved numbers were logged has the string "auto" there; value()
then fails and says so (re-run with a current build).
"""


def value(run, name):
    """The parameter name of the run's model (a runs.Run) as a float; NaN where the model leaves it
    unresolved (see above). ValueError if the run file has no such number."""
    p = run.params
    where = f"{run.path}: {run.attrs.get('model_group', '/model')}"
    old = "family" not in p  # the attribute came with the resolved numbers
    if name not in p:
        raise ValueError(f"{where} has no parameter {name!r}"
                         + (" (a run file from before the models' parameters were logged in full: re-run with a "
                            "current build)" if old else f" (model {run.attrs.get('model')})"))
    v = p[name]
    if isinstance(v, bytes):
        v = v.decode()
    if v == "auto":
        raise ValueError(f"{where}: {name} is logged as \"auto\", not the number the model resolved: a run file "
                         f"from before the resolved parameters were logged; re-run with a current build")
    if isinstance(v, str):
        raise ValueError(f"{where}: {name} is the choice {v!r}, not a number")
    return float(v)


def values(run, *names):
    """value(run, name) for each name, as a tuple."""
    return tuple(value(run, n) for n in names)


def choice(run, name, default=None):
    """The choice parameter name of the run's model as its string (e.g. "convergent"). default for a
    run file from before the parameter existed (e.g. quadrature: "vertex", the weights before the
    face-aware ones); ValueError if there is none and no default."""
    p = run.params
    if name not in p:
        if default is not None:
            return default
        raise ValueError(f"{run.path}: {run.attrs.get('model_group', '/model')} has no parameter {name!r}")
    v = p[name]
    return v.decode() if isinstance(v, bytes) else str(v)
