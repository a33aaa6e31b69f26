"""params.py — model parameters that a run logs as "auto", resolved by the models' own rules.

The resolved scene (root attribute scene_json) and the attributes of /model/<model> keep the
string "auto" where the scene left a parameter to the model; the analyses need the numbers. Each
function takes a contact dict (run.scene["contact"], or run.params) and applies the rule of the
C code cited, so that a future run file with the resolved numbers only changes this module.
"""
import math


def _given(contact, key):
    return contact.get(key, "auto") != "auto"


def adhesion_distances(contact):
    """(d̂, d̂_p, d̂_a) of ipc_adhesion (models/ipc_adhesion/ipc_adhesion.c, adhesion_init):
    d̂_a = 2 d̂ unless given; d̂_p = dhat_p if given, else s_p·d̂_a if s_p is given, else d̂."""
    dhat = contact["dhat"]
    da = contact["dhat_a"] if _given(contact, "dhat_a") else 2 * dhat
    if _given(contact, "dhat_p"):
        dp = contact["dhat_p"]
    elif _given(contact, "s_p"):
        dp = contact["s_p"] * da
    else:
        dp = dhat
    return dhat, dp, da


def eps_a(contact):
    """ε_a of ipc_adhesion's tangential adhesion: eps_v unless given (adhesion_init)."""
    return contact["eps_a"] if _given(contact, "eps_a") else contact["eps_v"]


def debond_dist(contact):
    """rcc_ipc's debond_dist: twice the reference gap d* = √(W/C_N) unless given
    (models/rcc_ipc/rcc_ipc.c, init)."""
    return contact["debond_dist"] if _given(contact, "debond_dist") else 2 * math.sqrt(contact["w"] / contact["c_n"])


def kappa(scene):
    """The barrier stiffness κ at the start of a run (ipc_init): kappa if given, else kappa_scale
    times the smallest Young's modulus of the bodies with a material (the model may double an
    "auto" κ during the run: /model/<model>/kappa logs it per step)."""
    c = scene["contact"]
    if _given(c, "kappa"):
        return c["kappa"]
    return c.get("kappa_scale", 0.1) * min(b["material"]["E"] for b in scene["bodies"] if "material" in b)
