"""The blindness audit of ``pack check``: can the trap be told before the first action?

A system under test is told the situation, never the answer (SPEC 5.3). This audit gathers
what a system observes before it acts, for every dev task of the pack (a written pack's task on
:data:`TRIALS` trials) and for a sample of the dev tasks of a few fresh instances when the pack
draws its tasks from a seed (:class:`~effectbench.seam.DrawsInstances`, seeds derived from its
public seed; :data:`SAMPLE` tasks per cluster):

* the agent view (:func:`~effectbench.run.view.agent_view`), its opaque handle dropped (an
  HMAC: it carries no signal, and keeping it would only add noise);
* the first observation. On the API substrate the first screen (``env.screen()``: status,
  banner, details). On a screen substrate the first frame's size and a layout digest (the
  frame's mean brightness on an 8 x 6 grid, and a hash of that grid), and the accessibility
  tree's roles, names and text where the env offers one (the desktop's AT-SPI tree:
  :class:`~effectbench.computer.AccessibleComputerEnv`). On the web, the first page as the
  harness reads it from Chromium through the front end's page handle
  (:class:`~effectbench.computer.PageReading`): its title, route, rendered text, markup tokens
  (ids, classes, hidden inputs, form and link targets) and Chromium's accessibility tree.

Screens cost a browser page or an X session per episode, so on a screen substrate the audit
observes a sample: the first :data:`SCREEN_GROUPS` groups of each category, each on
:data:`TRIALS` episodes, and no fresh instance. Each substrate is audited on its own (a
substrate's sample is balanced otherwise than the API's, and mixing them would let the
substrate stand for the category); every result names its substrate.

Then it trains cross-validated classifiers (scikit-learn) to predict, for each divergence
category, the category against the rest; control against trap; and "halt expected" (the task
has no correct action). Two models: a logistic regression over word and character n-grams of
the observed text plus the structured fields (referral keys, declared-effect fields, display,
vocabulary, screen), and gradient-boosted trees over the structured fields. Folds are grouped
by the pack's cluster (:class:`~effectbench.seam.ClustersTasks`: one template's instances) or
else by task, so learning a template's own instances is not a leak; the AUROC is taken over
the pooled out-of-fold predictions, averaged over :data:`REPEATS` differently shuffled splits.
A target whose positives or negatives fall in fewer than :data:`MIN_GROUPS` groups is not
cross-validated, and its line says so.

A target whose best AUROC exceeds :data:`THRESHOLD` is a ``pack.blindness`` finding naming the
target, the AUROC, the model and the features carrying the signal.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.feature_extraction import DictVectorizer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedGroupKFold
from threadpoolctl import threadpool_limits

from effectbench.computer import (
    A11yNode,
    AccessibleComputerEnv,
    ComputerEnv,
    PageReader,
    PageReading,
)
from effectbench.run.view import agent_view
from effectbench.schema import Category, Split, Substrate, TaskSpec
from effectbench.seam import Closable, ClustersTasks, DrawsInstances

__all__ = [
    "INSTANCES",
    "MIN_GROUPS",
    "SAMPLE",
    "SCREEN_GROUPS",
    "THRESHOLD",
    "TRIALS",
    "Observation",
    "TargetResult",
    "audit",
    "observe",
]

THRESHOLD = 0.65
"""The highest cross-validated AUROC a pack may show on any target."""
TRIALS = 2
"""Episodes observed at least per group: a group of one task (a written pack's) is observed on
this many trials (their referrals differ)."""
INSTANCES = 2
"""Fresh instances drawn from a pack that draws its tasks from a seed."""
SAMPLE = 4
"""Tasks observed per cluster of a fresh instance."""
SCREEN_GROUPS = 4
"""Groups (clusters or tasks) of each category observed on a screen substrate."""
MIN_GROUPS = 3
"""Groups (clusters or tasks) each class needs for a target to be cross-validated: with two,
a held-out group is judged by a model trained on one other, whose AUROC says more about a
chance coincidence (two tasks sharing an encounter type) than about a leak."""
FOLDS = 5
"""At most this many folds (fewer when a class has fewer groups)."""
REPEATS = 3
"""Grouped splits (shuffled differently) each AUROC is the mean of: one split of a few groups
is luck as much as signal."""
TOP = 3
"""Features named per target."""
GRID = (8, 6)
"""The layout digest's grid: columns x rows of mean brightness."""

CATEGORICAL = frozenset({"kind", "field", "surface", "key_field"})
"""Declared-effect keys whose string value is a field of its own (the others are text)."""

HALT = "halt_expected"
TRAP = "trap_vs_control"


@dataclass(frozen=True)
class Observation:
    """What a system observes of one episode before its first action, and its labels."""

    text: str
    """The view's goal, referral, declared effect and the first screen's text."""
    fields: Mapping[str, float | str]
    """Structured features (a string value is one-hot; a number is kept)."""
    category: Category
    halt_expected: bool
    group: str
    """The cross-validation group: the task's cluster (template), else the task."""


@dataclass(frozen=True)
class TargetResult:
    """One target's cross-validated result."""

    target: str
    positives: int
    negatives: int
    auroc: float | None = None
    model: str = ""
    features: tuple[str, ...] = ()
    reason: str = ""
    """Why no AUROC was taken (too few positives or negatives to cross-validate)."""
    substrate: str = Substrate.API.value
    """The substrate whose episodes were observed."""

    @property
    def leaks(self) -> bool:
        """Whether the target is predicted above :data:`THRESHOLD`."""
        return self.auroc is not None and self.auroc > THRESHOLD

    def line(self) -> str:
        """One line: ``blindness  target  substrate  AUROC (model)  top features`` or why
        none."""
        if self.auroc is None:
            return f"blindness\t{self.target}\t{self.substrate}\tnot cross-validated: {self.reason}"
        verdict = "LEAKS" if self.leaks else "ok"
        return (
            f"blindness\t{self.target}\t{self.substrate}\tAUROC {self.auroc:.3f} ({self.model}; "
            f"{self.positives} positive, {self.negatives} negative episodes)\t{verdict}\t"
            f"top features: {', '.join(self.features) or '(none)'}"
        )

    def message(self) -> str:
        """The ``pack.blindness`` finding's message."""
        return (
            f"{self.target} is predicted from what a system observes before its first action "
            f"on {self.substrate}: "
            f"cross-validated AUROC {self.auroc:.3f} > {THRESHOLD} ({self.model}); top "
            f"features: {', '.join(self.features)}"
        )

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object."""
        return {
            "target": self.target,
            "substrate": self.substrate,
            "positives": self.positives,
            "negatives": self.negatives,
            "auroc": None if self.auroc is None else round(self.auroc, 4),
            "model": self.model or None,
            "top_features": list(self.features),
            "reason": self.reason or None,
        }


# -- what is observed ------------------------------------------------------------------------


def _flat(value: Any, prefix: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _flat(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _flat(v, prefix)
    else:
        yield prefix, value


def view_features(view: Mapping[str, Any]) -> tuple[list[str], dict[str, float | str]]:
    """Return the text and the structured fields of a view's JSON form (its handle dropped)."""
    text = [str(view["goal"])]
    fields: dict[str, float | str] = {
        "goal.words": float(len(str(view["goal"]).split())),
        "goal.chars": float(len(str(view["goal"]))),
    }
    referral = view["referral"]
    fields["referral.keys"] = float(len(referral))
    for key, value in referral.items():
        fields[f"referral.has={key}"] = 1.0
        if value in ("", None):
            fields[f"referral.empty={key}"] = 1.0
        text.append(f"{key} {value}")
    effects = view["declared_effect"]
    fields["effect.declared"] = float(effects is not None)
    fields["effect.count"] = float(len(effects or ()))
    for effect in effects or ():
        for key, value in _flat(effect):
            name = f"effect.{key}"
            if isinstance(value, bool):
                fields[name] = float(fields.get(name, 0.0)) + float(value)
            elif isinstance(value, int | float):
                fields[name] = max(float(fields.get(name, 0.0)), float(value))
            elif value is None:
                fields[f"{name}=null"] = float(fields.get(f"{name}=null", 0.0)) + 1.0
            elif key.startswith("match."):
                fields[f"effect.match_key={key[6:]}"] = 1.0
                text.append(f"{key} {value}")
            elif key in CATEGORICAL:
                fields[f"{name}={value}"] = float(fields.get(f"{name}={value}", 0.0)) + 1.0
                text.append(f"{key} {value}")
            else:  # a value of the trial (a note, a key): text, and whether it is set
                fields[f"{name}.set"] = float(fields.get(f"{name}.set", 0.0)) + 1.0
                text.append(f"{key} {value}")
    display = view["display"]
    fields["display.surface"] = str(display["surface"])
    for key in ("width", "height"):
        if display.get(key) is not None:
            fields[f"display.{key}"] = float(display[key])
    fields["vocabulary.size"] = float(len(view["vocabulary"]))
    for name in view["vocabulary"]:
        fields[f"vocabulary={name}"] = 1.0
    return text, fields


def _screen_features(screen: Any) -> tuple[list[str], dict[str, float | str]]:
    text = [str(getattr(screen, "banner", ""))]
    fields: dict[str, float | str] = {"screen.status": str(getattr(screen, "status", ""))}
    for key, value in _flat(getattr(screen, "details", {}) or {}):
        fields[f"screen.detail={key}"] = 1.0
        text.append(f"{key} {value}")
    return text, fields


def frame_features(png: bytes) -> dict[str, float | str]:
    """Return the first frame's size and layout digest: its mean brightness on :data:`GRID`
    (each cell one feature) and a hash of the grid quantised to 16 levels."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        width, height = image.size
        grey = np.asarray(image.convert("L").resize(GRID, Image.Resampling.BOX), dtype=float)
    fields: dict[str, float | str] = {"frame.width": float(width), "frame.height": float(height)}
    for (row, col), value in np.ndenumerate(grey):
        fields[f"frame.grid.{row}.{col}"] = value / 255.0
    levels = (grey // 16).astype(np.uint8).tobytes()
    fields["frame.layout"] = hashlib.sha256(levels).hexdigest()[:12]
    return fields


def _a11y_features(root: A11yNode) -> tuple[list[str], dict[str, float | str]]:
    text: list[str] = []
    fields: dict[str, float | str] = {}
    stack = [root]
    nodes = 0
    while stack:
        node = stack.pop()
        nodes += 1
        role = f"a11y.role={node.role}"
        fields[role] = float(fields.get(role, 0.0)) + 1.0
        text += [t for t in (node.name, node.text, node.description) if t]
        stack.extend(node.children)
    fields["a11y.nodes"] = float(nodes)
    return text, fields


def page_features(page: PageReading) -> tuple[list[str], dict[str, float | str]]:
    """Return the text and fields of a web page as the harness reads it: its title, route,
    rendered text and markup tokens as text (the title, the route and each markup token a
    field too, so a title, a class or a hidden input that differs by category is seen whole),
    and its accessibility tree's roles, names and text."""
    text = [f"title {page.title}", f"route {page.route}", page.text, *page.markup]
    fields: dict[str, float | str] = {
        "page.title": page.title,
        "page.route": page.route.split("?", 1)[0],
        "page.title.words": float(len(page.title.split())),
        "page.text.chars": float(len(page.text)),
        "page.markup.tokens": float(len(page.markup)),
    }
    for token in page.markup:
        if not token.startswith("hidden "):  # a hidden input's value is the trial's
            fields[f"page.markup={token}"] = 1.0
        else:
            fields[f"page.hidden={token[7:].split('=', 1)[0]}"] = 1.0
    more, extra = _a11y_features(page.a11y)
    text += more
    fields.update(extra)
    return text, fields


def first_observation(
    env: Any, substrate: Substrate, page: PageReader | None = None
) -> tuple[list[str], dict[str, float | str]]:
    """Return the text and fields of what ``env`` shows before any action (``page``: the
    harness's handle on a web episode's page, read too)."""
    if substrate is Substrate.API or not isinstance(env, ComputerEnv):
        return _screen_features(env.screen())
    text: list[str] = []
    fields = frame_features(env.screenshot())
    if isinstance(env, AccessibleComputerEnv):
        more, extra = _a11y_features(env.a11y_tree())
        text += more
        fields.update(extra)
    if page is not None:
        more, extra = page_features(page.read_page())
        text += more
        fields.update(extra)
    return text, fields


Pack = Any
"""A :class:`~effectbench.seam.BenchmarkProvider` (kept loose: packs are duck-typed)."""


def _group(pack: Pack, task: TaskSpec) -> str:
    if isinstance(pack, ClustersTasks):
        return pack.cluster_of(task)
    return task.task_id


def _episodes(tasks: Sequence[TaskSpec], n: int) -> list[tuple[TaskSpec, int]]:
    """The first ``n`` of a group's episodes: every task's trial 0, then every task's trial 1,
    and so on."""
    order = [(task, trial) for trial in range(n) for task in tasks]
    return order[:n]


def _chosen_groups(
    pack: Pack, substrate: Substrate, per_category: int | None
) -> dict[str, list[TaskSpec]]:
    """The dev tasks of ``pack`` on ``substrate`` by group: every group, or the first
    ``per_category`` groups of each category."""
    groups: dict[str, list[TaskSpec]] = {}
    taken: dict[Category, int] = {}
    for task in pack.tasks():
        if task.split is not Split.DEV or task.substrate is not substrate:
            continue
        group = _group(pack, task)
        if group not in groups:
            if per_category is not None and taken.get(task.category, 0) >= per_category:
                continue
            taken[task.category] = taken.get(task.category, 0) + 1
        groups.setdefault(group, []).append(task)
    return groups


def _observe_one(pack: Pack, task: TaskSpec, trial: int) -> tuple[list[str], dict[str, Any]]:
    params = pack.trial_params(task, trial)
    with pack.provision(task, trial, dict(params)) as episode:
        view = agent_view(task, params, trial, episode.env).to_json()
        page = episode.page if isinstance(episode.page, PageReader) else None
        screen_text, screen_fields = first_observation(episode.env, task.substrate, page)
    text, fields = view_features(view)
    fields.update(screen_fields)
    return text + screen_text, fields


def _observe_pack(
    pack: Pack,
    substrate: Substrate,
    per_group: int | None,
    problems: list[str],
) -> list[Observation]:
    """Observe ``pack``'s dev tasks on ``substrate``: each group's first ``per_group``
    episodes (None: every task, and at least :data:`TRIALS` episodes per group); on a
    screen substrate only :data:`SCREEN_GROUPS` groups of each category."""
    seen: list[Observation] = []
    per_category = SCREEN_GROUPS if substrate.is_screen else None
    for group, tasks in _chosen_groups(pack, substrate, per_category).items():
        n = max(len(tasks), TRIALS) if per_group is None else per_group
        for task, trial in _episodes(tasks, n):
            try:
                text, fields = _observe_one(pack, task, trial)
            except Exception as exc:  # the pack's own code failed: said, never a traceback
                problems.append(f"{task.task_id} trial {trial}: {type(exc).__name__}: {exc}")
                continue
            seen.append(
                Observation(
                    text="\n".join(text),
                    fields=fields,
                    category=task.category,
                    halt_expected=not task.correct_action_available,
                    group=group,
                )
            )
    return seen


def instance_seeds(pack: DrawsInstances, n: int) -> list[str]:
    """Return the ``n`` fresh seeds the audit draws instances from (derived from the pack's
    public seed, so the audit is the same on every run)."""
    return [f"{pack.public_seed}/blindness-{i}" for i in range(1, n + 1)]


def observe(
    pack: Pack,
    substrate: Substrate,
    *,
    instances: int = INSTANCES,
    problems: list[str] | None = None,
) -> list[Observation]:
    """Return what a system observes before its first action on every dev task of ``pack``
    on ``substrate`` (a group of one task: :data:`TRIALS` trials of it), and on
    :data:`SAMPLE` tasks per cluster of ``instances`` fresh instances when the pack draws its
    tasks from a seed; on a screen substrate, a sample of the pack's own dev tasks only
    (:data:`SCREEN_GROUPS` groups per category). An episode that cannot be provisioned is
    said in ``problems`` and left out."""
    said = problems if problems is not None else []
    seen = _observe_pack(pack, substrate, None, said)
    if isinstance(pack, DrawsInstances) and not substrate.is_screen:
        for seed in instance_seeds(pack, instances):
            fresh = pack.instantiate(seed)
            try:
                seen += _observe_pack(fresh, substrate, SAMPLE, said)
            finally:
                if isinstance(fresh, Closable) and fresh is not pack:
                    fresh.close()
    return seen


# -- the classifiers -------------------------------------------------------------------------


@dataclass
class _Matrices:
    text: sparse.csr_matrix
    text_names: list[str]
    fields: sparse.csr_matrix
    field_names: list[str]
    groups: np.ndarray = field(default_factory=lambda: np.array([]))


def _matrices(observations: Sequence[Observation]) -> _Matrices:
    """Vectorise once (the vectorisers see no label, so fitting them on every episode tells
    the folds nothing about the targets). An n-gram is a 0/1 feature (present or not), like
    the scaled fields, so a word of the goal weighs as much as a field."""
    texts = [o.text for o in observations]
    presence = {"binary": True, "use_idf": False, "norm": None, "min_df": 2, "lowercase": True}
    words = TfidfVectorizer(
        analyzer="word", ngram_range=(1, 2), token_pattern=r"(?u)\b\w+\b", **presence
    )
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), max_features=3000, **presence)
    parts, names = [], []
    for name, vectoriser in (("word", words), ("char", chars)):
        try:
            parts.append(vectoriser.fit_transform(texts))
        except ValueError:  # no term occurs twice: nothing to learn from the text
            continue
        names += [f"{name}:{t!r}" for t in vectoriser.get_feature_names_out()]
    dicts = DictVectorizer()
    fields = dicts.fit_transform([dict(o.fields) for o in observations]).tocsr()
    text = sparse.hstack(parts).tocsr() if parts else sparse.csr_matrix((len(texts), 0))
    return _Matrices(
        text=text,
        text_names=names,
        fields=fields,
        field_names=[str(n) for n in dicts.get_feature_names_out()],
        groups=np.array([o.group for o in observations]),
    )


def _scaled(fields: sparse.csr_matrix) -> sparse.csr_matrix:
    """Fields scaled to [0, 1] per column (so counts and sizes weigh like one-hot columns)."""
    top = np.asarray(abs(fields).max(axis=0).todense()).ravel()
    top[top == 0] = 1.0
    return sparse.csr_matrix(fields.multiply(1.0 / top))


Model = Callable[[], Any]


def _logistic() -> Any:
    return LogisticRegression(C=1.0, class_weight="balanced", solver="lbfgs", max_iter=300)


def _trees() -> Any:
    return GradientBoostingClassifier(
        n_estimators=40, max_depth=2, learning_rate=0.1, subsample=0.8, random_state=0
    )


def _cross_validated(
    make: Model, x: Any, y: np.ndarray, groups: np.ndarray, folds: int
) -> float | None:
    """The mean over :data:`REPEATS` grouped splits of the AUROC of the pooled out-of-fold
    scores (None when a fold's training part holds one class)."""
    aurocs = []
    for repeat in range(REPEATS):
        scores = np.zeros(len(y), dtype=float)
        splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=repeat)
        for train, test in splitter.split(np.zeros(len(y)), y, groups):
            if len(set(y[train])) < 2:
                return None
            model = make().fit(x[train], y[train])
            scores[test] = model.predict_proba(x[test])[:, 1]
        aurocs.append(float(roc_auc_score(y, scores)))
    return float(np.mean(aurocs))


def _top(model: Any, x: Any, y: np.ndarray, names: Sequence[str]) -> tuple[str, ...]:
    """The features carrying most of the fitted ``model``'s signal: for a linear model its
    weight times the feature's mean difference between the classes (a word seen in one
    episode only weighs little), for trees their importance."""
    if hasattr(model, "coef_"):
        weights = model.coef_.ravel()
        gap = np.asarray(x[y == 1].mean(axis=0) - x[y == 0].mean(axis=0)).ravel()
        carried = weights * gap
        order = np.argsort(-carried)[:TOP]
        return tuple(names[i] for i in order if carried[i] > 0)
    importances = model.feature_importances_
    order = np.argsort(-importances)[:TOP]
    return tuple(names[i] for i in order if importances[i] > 0)


def _targets(observations: Sequence[Observation]) -> list[tuple[str, np.ndarray]]:
    targets = [
        (c.value, np.array([o.category is c for o in observations]))
        for c in Category
        if c is not Category.CONTROL
    ]
    targets.append((TRAP, np.array([o.category is not Category.CONTROL for o in observations])))
    targets.append((HALT, np.array([o.halt_expected for o in observations])))
    return targets


def audit(
    observations: Sequence[Observation], substrate: Substrate = Substrate.API
) -> list[TargetResult]:
    """Cross-validate both models on every target and return one result per target, each
    naming ``substrate`` (where the observations were made), on one thread: the fits are
    small, and a shared machine's cores thrash under BLAS threads."""
    with threadpool_limits(1):
        return [replace(r, substrate=substrate.value) for r in _audit(observations)]


def _audit(observations: Sequence[Observation]) -> list[TargetResult]:
    if not observations:
        return [
            TargetResult(name, 0, 0, reason="no episode observed")
            for name, _ in _targets(observations)
        ]
    m = _matrices(observations)
    fields = _scaled(m.fields)
    both = sparse.hstack([m.text, fields]).tocsr()
    both_names = m.text_names + [f"field:{n}" for n in m.field_names]
    dense = m.fields.toarray()
    field_names = [f"field:{n}" for n in m.field_names]
    models: list[tuple[str, Model, Any, list[str]]] = [
        ("logistic regression over n-grams and fields", _logistic, both, both_names),
        ("gradient-boosted trees over fields", _trees, dense, field_names),
    ]
    results = []
    for name, labels in _targets(observations):
        y = labels.astype(int)
        positives, negatives = int(y.sum()), int(len(y) - y.sum())
        pos_groups = len(set(m.groups[y == 1]))
        neg_groups = len(set(m.groups[y == 0]))
        if pos_groups < MIN_GROUPS or neg_groups < MIN_GROUPS:
            which = "positive" if pos_groups < MIN_GROUPS else "negative"
            count = pos_groups if pos_groups < MIN_GROUPS else neg_groups
            results.append(
                TargetResult(
                    name,
                    positives,
                    negatives,
                    reason=f"{count} {which} group(s) (clusters or tasks); "
                    f"cross-validation needs {MIN_GROUPS}",
                )
            )
            continue
        folds = min(FOLDS, pos_groups, neg_groups)
        best: TargetResult | None = None
        for model_name, make, x, names in models:
            auroc = _cross_validated(make, x, y, m.groups, folds)
            if auroc is None:
                continue
            if best is None or auroc > (best.auroc or 0.0):
                top = _top(make().fit(x, y), x, y, names)
                best = TargetResult(name, positives, negatives, auroc, model_name, top)
        results.append(
            best
            if best is not None
            else TargetResult(
                name, positives, negatives, reason="a fold's training part holds one class"
            )
        )
    return results
