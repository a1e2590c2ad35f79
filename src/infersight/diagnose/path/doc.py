"""Render docs/path.md, the request-path walk for users: `python -m infersight.diagnose.path.doc`.

What is read from the code stays true by construction: the parts and the signals each node is
read from (the catalog), the words a node is named with (`Node.describe`), the relations (each
module's `doc()`, in the walk's order), the relations by which a root sent more work, the order
a loop of changes is read in, and every setting of `PathConfig` with its reason. A test keeps
the page equal to this output.
"""

from __future__ import annotations

from typing import get_args

from infersight.diagnose.config import DEFAULT_CONFIG
from infersight.diagnose.path.config import PathConfig
from infersight.diagnose.path.relations.registry import relations
from infersight.diagnose.path.walk import _SOURCE_ORDER
from infersight.diagnose.path.world import _PRIMARY, HOP, Node
from infersight.diagnose.root_site import MORE_WORK
from infersight.signals import EFFECTS, Facet, Part, all_signals

#: what each facet measures of a part (signals.yaml's `facet`); a new facet fails the doc's test
FACETS: dict[str, str] = {
    "time": "time per unit of work (a latency, a forward pass)",
    "waiting": "time or requests waiting in a queue",
    "saturation": "how busy or how full (a busy share, a worker pool, a KV cache, memory)",
    "errors": "failures (error ratios, OOMs, preemptions)",
    "output": "work done (tokens or requests a second)",
    "arrivals": "work sent to it (requests a second)",
    "sends": "work it passes on (a cache's misses, its hit ratio)",
    "capacity": "what is in service (workers, replicas, clocks, a configured batch window)",
    "availability": "whether it answers (`up`, an exporter's own up flag, restarts)",
    "input": "what each request asks of it (tokens, prefix-cache hits)",
    "process": "its own runtime (GC, CPU, resident memory)",
    "resource": "what it runs on running short or failing (pressure, paging, disk, hardware)",
    "network": "the host's link (retransmits, drops, a full listen queue)",
}

#: the kinds of change (`Change.kind`), each with what it is
KINDS: tuple[tuple[str, str], ...] = (
    ("deviation", "detection found the series away from its baselines (the hour and the day "
     "before, or the window's own first minutes where no baseline holds it), dated by its "
     "first sign: where it last sat on its old side of halfway"),
    ("fleet_outlier", "one instance away from its peers of the same role"),
    ("absent", "the part stopped answering (`up` 0, an exporter's own up flag 0) or its series "
     "stopped while its siblings go on; read as *availability*. A latency series that stops "
     "on a replica still counting requests is no traffic, not a part gone"),
    ("trend", "a slow climb, dated where it began; it explains nothing that happened at once, "
     "and a forecast is walked from it"),
    ("step", "the median since the onset against the median before, by `step_ratio` and "
     "beyond the noise, on the facets that explain (arrivals, sends, input, capacity, "
     "process, resource, network, saturation): a third more work on the survivors of a lost "
     "peer, which an alerting band need not call"),
    ("peak", "what fills, arrives or comes at once peaked higher than before the onset and "
     "than the same hours yesterday, where its median says nothing (a card that fills and "
     "empties as its engine crash-loops)"),
    ("idle", "a replica that takes no requests before and since the onset while its peers "
     "serve: out of rotation since before the window, capacity its peers carry"),
    ("added", "time the gateway saw added beyond what the servers behind it timed (the hop's "
     "own change, since the hop has no series of its own)"),
)  # fmt: skip


def _part_rows() -> list[str]:
    by_part: dict[str, dict[str, list[str]]] = {}
    for name, sig in sorted(all_signals().items()):
        by_part.setdefault(sig.part, {}).setdefault(sig.facet, []).append(f"`{name}`")
    rows = ["| Part | Named | Read from (by facet) |", "|---|---|---|"]
    for part in get_args(Part):
        if part == "instance":
            continue
        facets = by_part.get(part, {})
        cells = "; ".join(f"{f}: {', '.join(facets[f])}" for f in get_args(Facet) if f in facets)
        words = Node(f"{part}:*instance*", part, "*instance*").describe()
        rows.append(f"| `{part}` | {words} | {cells} |")
    rows.append(
        f"| `{HOP}` | {Node(HOP, HOP, '').describe()} | no series of its own: the time the "
        "gateway saw added beyond the servers (a change of kind `added`) |"
    )
    flags = ", ".join(f"`{n}`" for n, s in sorted(all_signals().items()) if s.part == "instance")
    primary = ", ".join(f"`{p}`" for p in _PRIMARY)
    rows += [
        "",
        f"A signal of the whole machine ({flags}) belongs to the first of {primary} the "
        "instance has: a vector DB's target going down is the retrieval backend going down.",
    ]
    return rows


def _relation_rows() -> list[str]:
    rows = ["| Order | Relation | Module |", "|---|---|---|"]
    for r in relations():
        module = r.explain.__module__.rsplit(".", 1)[-1]
        rows.append(f"| {r.order} | {r.doc()} | `relations/{module}.py` |")
    return rows


def _settings() -> list[str]:
    rows = ["| Setting | Default | Why |", "|---|---|---|"]
    for name, f in PathConfig.model_fields.items():
        why = " ".join((f.description or "").split())
        rows.append(f"| `{name}` | {f.default!r} | {why} |")
    return rows


_INTRO = """\
# The request-path walk

Generated from `src/infersight/diagnose/path/` by `python -m infersight.diagnose.path.doc > \
docs/path.md`; do not edit by hand.

The rules (docs/rules.md) name the mechanisms they were written for. An incident no rule was \
written for still has a place where it began, and the request path says where: seed §5.2 reads \
the 02:17 incident from the gateway down (the gateway's errors come from the service, the \
service's queue from requests held in it, those from a slower vector DB, and that from a \
vector DB out of RAM), a slowdown "amplified layer by layer along the request chain". The walk \
does that reading on every diagnosis, before any rule is asked to name what it found:

- a consequence is not named as the cause (a vector DB slowed by the misses of an emptied \
cache in front of it is where the work piled up; the cache is the root);
- the hop is not named for what loaded or slowed it (a traffic rise, a host's CPU taken by \
another process, replicas restarting in turn);
- a change no rule names is still an answer: the node, and what changed there, with figures.

It runs inside `infersight diagnose` (and `serve`, `capture`, the demo) with nothing to \
configure; the `node`, `bottleneck`, `trigger`, `via`, `unnamed` and `triggered_by` of each \
root in the JSON report are its result, and the first screen says them in words."""

_EDGES = """\
Edges are of three kinds, built from the parts present, never written per stack:

- **calls**: who sends work to whom. The model's replicas are the services on instances with \
an engine and a GPU (with no card scraped at all, every service with an engine). A service \
that is no replica (an API in front of the engines; one with a batcher of its own but no card) \
is the front; with none scraped and a gateway scraped, a virtual `hop` stands for the API the \
stack runs without metrics. The gateway calls the front (or the replicas where there is \
none); the front calls the replicas, the caches and the retrieval backends; with no front, \
each replica calls the caches and retrieval backends itself; a service calls its own engine. \
A replica that counts its own lookups (its cache's hits, its searches' time) reads the cache \
and retrieval servers that are scraped.
- **misses**: each cache sends what it misses on to the retrieval backends.
- **runs_on**: every part runs on its instance's host; an engine, and the service that serves \
through it, on its instance's GPU; the virtual hop on the hosts no other part claims (the \
API's machines, scraped by node_exporter alone).

Instances are machines, not scrape targets: the sources already joined an engine's, \
dcgm-exporter's and node_exporter's series of one machine into one identity (docs/signals.md), \
so the slow requests and the hot card of node-7 meet on one machine.

**Declaring more of the path.** What the roles cannot tell (an API that calls a reranker, an \
embedding service the engines wait on) is declared in a small YAML file, given to \
`infersight diagnose --path-file FILE` (or `$INFERSIGHT_PATH_FILE`) and to `serve` as \
`path_file:`. Its keys are the kinds of edge, each a list of `[FROM, TO]` pairs of nodes \
`PART:INSTANCE`; an instance may be a shell pattern, standing for every instance of that part \
present (none where none matches); a literal node nothing scraped is added, and the walk passes \
through it like the hop. Declared edges add to those built from the roles; none is taken away. \
A file that cannot be used is refused in one line naming the entry (`diagnose/path/topology.py`):

```yaml
calls:                                  # who sends work to whom
  - [service:api-*, service:rerank-0]   # a reranker is a service
misses:                                 # a cache passes what it misses on
  - [cache:redis-0, retrieval:qdrant-0]
runs_on:                                # what runs where
  - [service:rerank-0, host:node-9]
```"""

_CHANGES = """\
At every node the walk asks what changed over the window. A change is one series (a signal on \
an instance) that moved, with its node, its facet, its way (up or down, and whether that is \
the bad way), when it began and its figures (before → after).

**Availability is evidence.** From the moment a part stopped answering, nothing it reported \
before says anything of it after: its steps are read on its readings before that moment only, \
and a series that stopped is unknown, never unchanged. A part that went down is a hard line in \
time: what began once it was down or back explains nothing it did before it came back."""

_WALK = """\
**Where it starts.** What the users felt: a user-facing signal (`user_facing` in \
`catalog/signals.yaml`) that got worse, at least `symptom_min_score` strong \
(`DiagnoseConfig`, {symptom:g}; a change read against the window's own first minutes must be as \
strong as `unfelt_min_score`). Where the users felt nothing yet but the window is no healthy \
one, the strongest changes of a part's time, queue, errors or availability, at least \
`unfelt_min_score`, start it instead, so that where it began is named, never nothing. A \
forecast (a rule of kind `forecast`: a card or a host running out within a day) is a symptom \
to come: the walk starts from its evidence too, so what grows toward it is the root. Where all \
that found nothing and no rule confirmed a cause, a symptom rule that holds on changes too \
faint to date an incident starts it (the users felt it; read against the window's own first \
minutes alone, a change must be as strong as `unfelt_min_score`), and a root no rule names is \
shown less surely by as much as they fall short (`Walk.certainty`); then the unexplained \
changes that make the window no healthy one (`DiagnoseConfig.unhealthy_shift`; a slow climb \
alone is the forecasts' to judge), so that a window that is not healthy names where it began.

**Each step.** For a change, every relation says which other changes can have made it; the \
walk follows every link. A cause does not start after its effect beyond what dating can tell \
apart (`onset_slack_s`, or two grid steps).

**Where it ends.** At the changes nothing explains: several ends are several roots. Changes \
that only explain each other (requests waiting hold memory; memory full makes requests wait) \
are read from the one that is their source. Across a part and what it runs on (batches held \
longer fill the card; a fuller card holds them longer), with no more work from outside, the \
source is under the part: what it runs on changed. Then by facet: {order}."""

_ROOTS = """\
**Sites.** The ends are grouped by site: on the replicas, one part on every instance of one \
role (the engines of the fleet, their GPUs: a fleet-wide change is one root, never refused for \
being fleet-wide); elsewhere the machine (a vector DB and the host it has to itself). On one \
site, more work arriving and a change of the part itself are two roots: a trigger, and what it \
met.

**Rules name the sites.** A confirmed cause names a site where:

- its `at` parts (where on the path its mechanism sits; docs/rules.md gives each rule's) on \
the instances its evidence names hold a node of the site;
- its `signals`, the changes that set its mechanism apart from its neighbours', are among \
what changed at the site unexplained (a rule confirmed on a site's consequences names a \
neighbour, not this one);
- of several, it is the one no other of them explains, then the most confident.

A confirmed cause that is no root is a consequence, generically: a root explains it through \
the rules' `explains`, or the walk passed through its parts (the vector DB slowed because \
the cache in front of it missed more). A named root another named root explains by the rules \
joins it; a site no rule names that lies within a named root's parts and instances is that \
root's. A confirmed cause the walk never reached is walked from its own changes: where they \
all end off its parts (a restart and a reload after the card's Xid errors), its premises are \
consequences and those ends are the root, named or not; one that leads to no end of its own \
(a leak nobody felt yet) stands on the rules' own verdict, after the walk's roots.

**Limits.** A rule marked `under_load` is a limit that only shows under more work (an \
unbounded queue, a batch cap past the knee, a pool that admits everything, a card without \
headroom). Where a root's work reached the limit's parts, the limit is named as a root beside \
it (`triggered_by` in the JSON): before it where that work was only more of it (a burst a \
sound setting absorbs: the limit is the fault) or the rules read the root as the limit's own \
consequence; after it where the work came from a failure (peers restarting in turn: the \
failure is).

**Order.** Roots are ranked by the strongest change the users felt that they explain, then \
by how much they changed, then by when they began (ties within `onset_tie_s` by confidence): \
an early wobble under the same symptom does not outrank the cause of the outage."""

_TRIGGER = """\
Along the shortest chain of links from a root to the symptom (one by which it sent more work, \
where there is one):

- the root is a **trigger** when it sent more work down the path, by one of the relations \
{more};
- the **bottleneck** is the first node past the root (and the parts its rule names) where the \
work piled up: it arrived there as more work (the gateway aside), or its queue or busy share \
grew (for the hop, the time it added).

The root is the trigger; the remedy covers both. The first screen of every report (terminal, \
Markdown, `--brief`, HTML) says it in one line per root, in the words above, with the root's \
first figure:

```
path: the gateway ingress-0 sent more work: access.request_rate 39.7/s → 99.1/s (2.5×) since
01:40 (trigger) → piled up at the hop between the gateway and the engines (the API, without
metrics) (bottleneck)
do: Scale out … ; and where it piled up: the hop between the gateway and the engines (…).
```

A limit named beside a trigger says so ("the service on node-1, a limit the work of #2 (the \
gateway ingress-0) ran into: …"), and the trigger names it back ("→ ran into the limit #1")."""

_UNNAMED = """\
Where no rule names a site, the answer is the site itself: `change@NODE` (`change@NODE+N` for \
a site of several nodes), titled "A change at NODE that no known failure mode names", with:

- its changes, one line per signal, the ends first (in the order they began; of those that \
began together, a part that stopped answering first, then the work it took), then its nodes' \
other changes that got worse, earliest and largest first; each on its strongest instance, \
naming how many of the site's instances moved the same way; at most `unnamed_max_signals`;
- a remedy naming the measurements that would tell the mechanisms known at that part apart: \
the rules whose `at` holds it, with what each lacked or why it was ruled out;
- its confidence from the strength of its changes, like a rule's.

A site no rule names is a root only where it changed at least `unnamed_min_score` (a shift of \
the medians alone, a `step`, at least `unfelt_min_score`): a faint wobble at the end of a walk \
is no cause."""

_JSON = """\
Each root in `root_causes` carries:

| Field | What |
|---|---|
| `node` | where on the path it sits (`part:instance`, or `hop`) |
| `nodes` | every node of its site, `node` first |
| `bottleneck` | the node where its work piled up on the way to the symptom ("": none stood out) |
| `trigger` | it sent more work down the path |
| `via` | the nodes from the root to the symptom |
| `unnamed` | no rule names its mechanism: `hypothesis` is `change@NODE` |
| `triggered_by` | a limit named beside a trigger: the id of the root whose work it ran into |

Roots the walk did not find (the rules' own verdict) have these empty."""


def render() -> str:
    missing = set(get_args(Facet)) - set(FACETS)
    if missing:
        raise ValueError(f"FACETS lacks {sorted(missing)}: say what each facet measures")
    order = sorted(_SOURCE_ORDER, key=lambda f: _SOURCE_ORDER[f])
    effects = [f for f in get_args(Facet) if f in EFFECTS]
    causes = [f for f in get_args(Facet) if f not in EFFECTS]
    out = [_INTRO, "", "## The path", "", "### Nodes", ""]
    out += [
        "A node is one part of the request path on one instance (`retrieval:vdb-0`, "
        "`gpu:node-3`). Every canonical signal says which part it describes (`part` in "
        "`catalog/signals.yaml`); a part is on the path where at least one of its signals has "
        "a reading in the window.",
        "",
        *_part_rows(),
        "",
        "### Edges",
        "",
        _EDGES,
        "",
        "## Changes",
        "",
        _CHANGES,
        "",
        "What a change measures is its signal's facet. The walk explains the facets a slowdown "
        "is made of, "
        + ", ".join(f"*{f}*" for f in effects)
        + "; the others explain them, "
        + ", ".join(f"*{f}*" for f in causes)
        + ".",
        "",
        "| Facet | Measures |",
        "|---|---|",
        *[f"| `{f}` | {FACETS[f]} |" for f in get_args(Facet)],
        "",
        "| Kind | What |",
        "|---|---|",
        *[f"| `{k}` | {what} |" for k, what in KINDS],
        "",
        "## Relations",
        "",
        "One module per mechanism (`diagnose/path/relations/`), tried on every change in this "
        "order; each names the changes that can have made it. Adding a mechanism is one module "
        "with `NAME`, `ORDER`, `explain(reader, change)` and `doc()`, and its test: the "
        "registry finds it and this page lists it.",
        "",
        *_relation_rows(),
        "",
        "## The walk",
        "",
        _WALK.format(
            symptom=DEFAULT_CONFIG.symptom_min_score,
            order=", then ".join(f"*{f}*" for f in order),
        ),
        "",
        "## Roots",
        "",
        _ROOTS,
        "",
        "## Trigger and bottleneck",
        "",
        _TRIGGER.format(more=", ".join(f"*{m}*" for m in sorted(MORE_WORK))),
        "",
        "## Unnamed roots",
        "",
        _UNNAMED,
        "",
        "## In the JSON report",
        "",
        _JSON,
        "",
        "## Settings",
        "",
        "`PathConfig` (`diagnose/path/config.py`), passed as `diagnose(..., path=)`:",
        "",
        *_settings(),
    ]
    return "\n".join(out) + "\n"


def main() -> None:
    print(render(), end="")


if __name__ == "__main__":
    main()
