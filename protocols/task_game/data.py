"""The data of Section 3 (Winkowski, "Data" and "Local states of ..."), as immutable values.

Agents run on nodes (one agent per node, so a node is named by its agent); each pool of
interchangeable resources sits at one node and is controlled by that node's agent acting as its
resource manager (``manager: Pools -> Agents``); each resource (here: a *unit*) belongs to one
pool (``pool: Resources -> Pools``); numbered tickets ``nK + i`` belong to the agent numbered
``i`` (``owner: Tickets -> Agents``). Tasks are fixed by the workload (the paper's "potential
tasks"): each has its agent and its ``interest`` (a set of pools).

Forms carry the task that made them (``task(...)``) and, where the paper says so, its ticket
(``ticket(...)``). A request also carries a per-pool sequence number, so that a request sent
again after a withdrawal is a *new* request (see the notes in docs/protocols/task_game.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx

from ..kernel.variants import Feature, table
from ..scenario import ScenarioError

INF = None   # alarm-clock value "∞": no moment set

# status_T values (Section 3, "Local states of tasks"); NEW and LEFT are ours: a potential task
# not yet created, and a task that has left the game and the system.
NEW, REGISTERING, ADMITTED, TRYING = "NEW", "REGISTERING", "ADMITTED", "TRYING"
ADVANCING, ORDERING, WINNING = "ADVANCING", "ORDERING", "WINNING"
ACCESSING, RELEASING, LEFT = "ACCESSING", "RELEASING", "LEFT"
STATUSES = (NEW, REGISTERING, ADMITTED, TRYING, ADVANCING, ORDERING, WINNING, ACCESSING,
            RELEASING, LEFT)


@dataclass(frozen=True, slots=True, order=True)
class Request:
    """A request of accessing resources: ticket first, so sorting by it sorts by priority."""

    ticket: int
    task: str
    seq: int = 0        # how many requests ``task`` sent to this pool before this one


@dataclass(frozen=True, slots=True)
class AgentState:
    """Local state of agent A (Section 3): clock_A, Controlled_A, Entering_A, Competing_A,
    DistributedTickets_A. ``to_create`` are the potential tasks A will still create, in order;
    ``admitted`` / ``accessing`` are the tasks whose state asks A to give / take a ticket (A reads
    them from its tasks' states, which it may access); ``alarms`` the alarm-clocks its tasks set,
    so that A's clock advances exactly while some task waits for it."""

    clock: int = 0
    controlled: tuple[str, ...] = ()
    entering: tuple[str, ...] = ()
    competing: tuple[str, ...] = ()
    distributed_tickets: tuple[int, ...] = ()
    to_create: tuple[str, ...] = ()
    admitted: tuple[str, ...] = ()
    accessing: tuple[str, ...] = ()
    alarms: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class ManagerState:
    """Local state of the manager of pool P: Applications_P (registration forms, by task),
    Admissions_P ((task, ticket)), Requests_P (a queue), Orders_P ((task, ticket)),
    InUse_P with user_P as (unit, task) pairs."""

    applications: tuple[str, ...] = ()
    admissions: tuple[tuple[str, int], ...] = ()
    requests: tuple[Request, ...] = ()
    orders: tuple[tuple[str, int], ...] = ()
    in_use: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class About:
    """What task T knows of one pool P: AboutPredecessors_T,P, AboutRegistered_T,P,
    AboutRequests_T,P, AboutOrders_T,P and AboutUse_T,P (resources with their users)."""

    predecessors: tuple[tuple[str, int], ...] = ()
    registered: tuple[str, ...] = ()
    requests: tuple[Request, ...] = ()
    orders: tuple[tuple[str, int], ...] = ()
    use: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class TaskState:
    """Local state of task T: status_T, TicketsAt_T, alarm-clock_T, Destinations_T and the
    About*/BlockingRequests families, one entry per pool of interest(T) in config order.
    ``clock`` is the clock of T's agent as T reads it (the paper lets tasks read it);
    ``sent`` counts the requests sent to each pool (names the next request)."""

    status: str = NEW
    tickets_at: tuple[int, ...] = ()
    alarm_clock: int | None = INF
    destinations: tuple[str, ...] = ()
    about: tuple[About, ...] = ()
    blocking: tuple[tuple[Request, ...], ...] = ()
    clock: int = 0
    sent: tuple[int, ...] = ()


@dataclass(frozen=True)
class TaskSpec:
    name: str
    agent: str
    interest: tuple[str, ...]


# The variants as named features (kernel.variants): ``complete`` is Sections 2-3 as printed;
# ``restricted`` is the paper's own simpler game of Section 2; ``full`` adds our two repairs.
VARIANT_TABLE = table(
    features=(
        Feature("restricted", "Section 2's restricted game: condition (p1), a direct win, no "
                "order forms, alarm-clock or advancing", "", "paper"),
        Feature("R2", "WINNING only once the order forms are seen and T can still win at "
                "every pool, so no created task fails", "task_game:item 14"),
        Feature("R3", "advancing forms go only to the pools where the task is blocked, so a "
                "failure's effect stays local", "task_game:item 16"),
    ),
    variants={"restricted": ("restricted",), "complete": (), "full": ("R2", "R3")},
    default="full")


@dataclass(frozen=True)
class Config:
    """What never changes in a run: the network, the pools, the potential tasks, Γ."""

    agents: tuple[str, ...]
    pools: tuple[str, ...]
    units: dict[str, tuple[str, ...]]       # pool -> names of its resources (pool^-1(P))
    manager: dict[str, str]                  # pool -> agent
    tasks: dict[str, TaskSpec]
    task_order: tuple[str, ...]
    K: int
    gamma: int
    variant: str
    conflict: Any = None                     # nx.Graph: tasks sharing a pool

    def has(self, feature: str) -> bool:
        """Whether the run's variant switches ``feature`` on (VARIANT_TABLE)."""
        return feature in VARIANT_TABLE.on(self.variant)

    def agent_no(self, agent: str) -> int:
        return self.agents.index(agent) + 1

    def pool_index(self, task: str, pool: str) -> int:
        return self.tasks[task].interest.index(pool)


def _names(value: Any, field: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ScenarioError(f"{field}: must be a non-empty list of names")
    if len(set(value)) != len(value):
        raise ScenarioError(f"{field}: names must be unique")
    return value


def build_config(scenario: Any, variant: str) -> Config:
    """Validate topology / workload / params and build the Config (ScenarioError names the field)."""
    topo, work, params = scenario.topology, scenario.workload, scenario.params
    agents = _names(topo.get("agents"), "scenario.topology.agents")
    pools_raw = topo.get("pools")
    if not isinstance(pools_raw, dict) or not pools_raw:
        raise ScenarioError("scenario.topology.pools: must map pool names to "
                            "{\"agent\": ..., \"units\": n}")
    units: dict[str, tuple[str, ...]] = {}
    manager: dict[str, str] = {}
    for p, spec in pools_raw.items():
        f = f"scenario.topology.pools.{p}"
        if not isinstance(spec, dict):
            raise ScenarioError(f"{f}: must be an object with agent and units")
        if spec.get("agent") not in agents:
            raise ScenarioError(f"{f}.agent: must be one of {', '.join(agents)}")
        n = spec.get("units", 1)
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 20:
            raise ScenarioError(f"{f}.units: must be a whole number from 1 to 20")
        manager[p] = spec["agent"]
        units[p] = tuple(f"{p}.r{k}" for k in range(n))
    pools = tuple(pools_raw)
    overlap = set(pools) & set(agents)
    if overlap:
        raise ScenarioError(f"scenario.topology.pools: names clash with agents: {sorted(overlap)}")
    tasks_raw = work.get("tasks")
    if not isinstance(tasks_raw, list) or not tasks_raw:
        raise ScenarioError("scenario.workload.tasks: must be a non-empty list of "
                            "{\"id\", \"agent\", \"interest\"}")
    tasks: dict[str, TaskSpec] = {}
    for k, t in enumerate(tasks_raw):
        f = f"scenario.workload.tasks[{k}]"
        if not isinstance(t, dict) or not isinstance(t.get("id"), str):
            raise ScenarioError(f"{f}.id: must be a name")
        if t["id"] in tasks or t["id"] in pools or t["id"] in agents:
            raise ScenarioError(f"{f}.id: {t['id']!r} is used twice")
        if t.get("agent") not in agents:
            raise ScenarioError(f"{f}.agent: must be one of {', '.join(agents)}")
        interest = _names(t.get("interest"), f"{f}.interest")
        bad = [p for p in interest if p not in units]
        if bad:
            raise ScenarioError(f"{f}.interest: unknown pools {bad}")
        tasks[t["id"]] = TaskSpec(t["id"], t["agent"], tuple(interest))
    gamma = params.get("gamma", 2)
    if not isinstance(gamma, int) or isinstance(gamma, bool) or not 1 <= gamma <= 1000:
        raise ScenarioError("scenario.params.gamma: must be a whole number from 1 to 1000")
    g = nx.Graph()
    g.add_nodes_from(tasks)
    names = list(tasks)
    # Tasks conflict when they share a pool: found through each pool's tasks (linear in the
    # tasks plus the conflicts, not quadratic in the tasks), and added in the order of the
    # pairs (i < j) so the graph's adjacency order is what it always was.
    index = {t: i for i, t in enumerate(names)}
    on_pool: dict[str, list[str]] = {p: [] for p in pools}
    for t in names:
        for p in dict.fromkeys(tasks[t].interest):
            on_pool[p].append(t)
    for i, a in enumerate(names):
        later = {b for p in dict.fromkeys(tasks[a].interest) for b in on_pool[p] if index[b] > i}
        g.add_edges_from((a, b) for b in sorted(later, key=index.__getitem__))
    return Config(tuple(agents), pools, units, manager, tasks, tuple(names), len(agents) + 1,
                  gamma, variant, g)
