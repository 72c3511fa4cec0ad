"""What a verification check reports: the check families, the registry of check ids, a finding.

Every finding carries a :class:`CheckId`, a stable ``family.rule`` id with a
one-line meaning; the verifier (``verifier/``) and the signature checks of
:mod:`effectbench.signatures` (which signing also runs before it writes a
signature) emit only ids of this registry, so the registry lives on the engine
side where both can use it. ``docs/verifier-report.md`` holds the same table
(``make generate`` rewrites it with :func:`with_check_table`; a test compares the two).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "CheckId",
    "Family",
    "Finding",
    "check_table",
    "docs_check_table",
    "generated_section",
    "id_table_rows",
    "with_check_table",
    "with_generated_section",
]

_BEGIN = "<!-- check ids: begin (make generate) -->"
"""Where the check-id table starts in the docs page that lists every check id."""
_END = "<!-- check ids: end -->"


class Family(StrEnum):
    """The check families, in the order they run and are reported."""

    STRUCTURE = "structure"
    SPEC = "spec"
    PACK = "pack"
    RESCORE = "rescore"
    RECEIPT = "receipt"
    CLAIMS = "claims"
    SIGNATURE = "signature"
    REPRODUCE = "reproduce"
    RANKING = "ranking"
    MONITOR = "monitor"
    """A monitor bundle's own checks (its scores, reads, corpus and labels)."""


class CheckId(StrEnum):
    """Every check id a finding may carry: ``family.rule``, with what it means.

    A member is its id string (``CheckId.PACK_SEED == "pack.seed"``), so reports
    and JSON carry plain strings.
    """

    meaning: str
    """What the finding says is wrong, in one line."""

    def __new__(cls, value: str, meaning: str) -> CheckId:
        """Make the member ``value`` with its one-line ``meaning``."""
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    @property
    def family(self) -> Family:
        """The family of the check (the id's part before the dot)."""
        return Family(self.partition(".")[0])

    STRUCTURE_MISSING_FILE = "structure.missing_file", "a required bundle file is missing"
    STRUCTURE_UNEXPECTED_FILE = (
        "structure.unexpected_file",
        "the bundle holds a file or folder other than the bundle files",
    )
    STRUCTURE_SYMLINK = (
        "structure.symlink",
        "the bundle folder, a bundle file or the document is a symbolic link",
    )
    STRUCTURE_FILE_SIZE = "structure.file_size", "a file is larger than its limit"
    STRUCTURE_ROW_COUNT = "structure.row_count", "more rows than the limit (--max-rows)"
    STRUCTURE_LINE_LENGTH = (
        "structure.line_length",
        "a line of episodes.jsonl is longer than the limit (--max-line-bytes)",
    )
    STRUCTURE_BLANK_LINE = "structure.blank_line", "a blank line in episodes.jsonl"
    STRUCTURE_LINE_ENDING = (
        "structure.line_ending",
        "a line of episodes.jsonl ends with a carriage return (CRLF, not LF)",
    )
    STRUCTURE_BOM = "structure.bom", "a JSON text starts with a byte order mark (U+FEFF)"
    STRUCTURE_HARD_LINK = (
        "structure.hard_link",
        "a bundle file is hard-linked to another file (it must be a file of its own)",
    )
    STRUCTURE_JSON = "structure.json", "not valid JSON, or not UTF-8 text"
    STRUCTURE_TRUNCATED = (
        "structure.truncated",
        "the last line of episodes.jsonl is cut short (no final newline)",
    )
    STRUCTURE_NON_FINITE = "structure.non_finite", "a number is NaN, Infinity or overflows"
    STRUCTURE_DUPLICATE_KEY = "structure.duplicate_key", "a JSON object repeats a key"
    STRUCTURE_NESTING = (
        "structure.nesting",
        "arrays and objects nested deeper than the limit (255 levels)",
    )
    STRUCTURE_TYPE = "structure.type", "a value has the wrong type or is out of range"
    STRUCTURE_ENUM = "structure.enum", "a string is not one of its field's allowed values"
    STRUCTURE_MISSING_FIELD = "structure.missing_field", "a required field is missing"
    STRUCTURE_UNKNOWN_FIELD = "structure.unknown_field", "a field the format does not define"
    STRUCTURE_TIMESTAMP = "structure.timestamp", "a time is not an ISO 8601 string"
    STRUCTURE_TEXT = (
        "structure.text",
        "a shown text holds a character that is not a letter, mark, number, punctuation, "
        "symbol or space (a control, format, noncharacter or invisible one)",
    )
    STRUCTURE_TEXT_LENGTH = (
        "structure.text_length",
        "a text or list is longer than its limit in the bundle schema",
    )
    STRUCTURE_FOLDER_NAME = (
        "structure.folder_name",
        "a bundle folder under submissions/ is not named YYYY-MM-DD_slug",
    )
    STRUCTURE_EMPTY = "structure.empty", "episodes.jsonl holds no row"
    STRUCTURE_BUNDLE_VERSION = (
        "structure.bundle_version",
        "effectbench_bundle_version is not one this verifier reads",
    )
    STRUCTURE_README = "structure.readme", "README.md is not UTF-8 text"
    STRUCTURE_UPSTREAM = (
        "structure.upstream",
        "an upstream document lacks what a submission needs",
    )

    SPEC_SEMVER = "spec.semver", "the spec version is not a semantic version"
    SPEC_MAJOR = "spec.major", "the SPEC major version differs from the leaderboard's"
    SPEC_MINOR_NEWER = "spec.minor_newer", "the SPEC minor version is newer than the leaderboard's"

    PACK_UNKNOWN = "pack.unknown", "the declared pack is not known here"
    PACK_NOT_ACCEPTED = (
        "pack.not_accepted",
        "the declared pack is not on the accepted list at the version and code installed here",
    )
    PACK_FINGERPRINT = (
        "pack.fingerprint",
        "the declared pack fingerprint differs from the released pack's",
    )
    PACK_SPLIT = "pack.split", "the pack has no task in the declared split"
    PACK_SEEDS = "pack.seeds", "the seeds are not one distinct seed per trial"
    PACK_MIN_TRIALS = "pack.min_trials", "fewer trials per task than a ranked entry needs (3)"
    PACK_TASK = "pack.task", "a row's task is not in the declared pack split"
    PACK_CATEGORY = "pack.category", "a row's category differs from its task's in the pack"
    PACK_SUBSTRATE = "pack.substrate", "a row's substrate differs from its task's in the pack"
    PACK_CORRECT_ACTION_AVAILABLE = (
        "pack.correct_action_available",
        "a row's correct_action_available differs from its task's in the pack",
    )
    PACK_EFFECT_HASH = (
        "pack.effect_hash",
        "a row's expected_effect_hash differs from its task's effect contract",
    )
    PACK_TRIAL = "pack.trial", "a row's trial is outside 0..trials_per_task-1"
    PACK_SEED = "pack.seed", "a row's seed differs from the seed declared for its trial"
    PACK_DUPLICATE_EPISODE_ID = "pack.duplicate_episode_id", "two rows share an episode_id"
    PACK_DUPLICATE_TRIAL = "pack.duplicate_trial", "two rows share a (task, trial)"
    PACK_MISSING_TRIALS = (
        "pack.missing_trials",
        "a (task, trial) pair without a row is not listed in run.dropped",
    )
    PACK_ARM = "pack.arm", "the rows cover more than one arm"
    PACK_DROPPED_LIST = (
        "pack.dropped_list",
        "run.dropped does not list exactly the (task, trial) pairs without a row",
    )
    PACK_DROP_CAP = (
        "pack.drop_cap",
        "more drops than allowed (one per task, 5% overall, none on a deterministic pack)",
    )
    PACK_TASK_UNCOVERED = "pack.task_uncovered", "a task of the declared split has no row"
    PACK_ATTEMPTS = (
        "pack.attempts",
        "run.attempts does not hold together: a completed attempt replaced, attempts missing "
        "or misnumbered, or run.n_attempts wrong",
    )
    PACK_UNREACHABLE_STATE = (
        "pack.unreachable_state",
        "a row's oracle reading is one its task can never reach (the pack's table)",
    )
    PACK_INSTANCE_SEED = (
        "pack.instance_seed",
        "an instance seed is declared for a pack that draws no instances from a seed",
    )
    PACK_INSTANCE_GENERATOR = (
        "pack.instance_generator",
        "drawing the pack's instance again, a template raised or drew a duplicate task",
    )
    PACK_INSTANCE_TASK = (
        "pack.instance_task",
        "no row's task was drawn from the bundle's instance seed",
    )
    PACK_INSTANCE_MIXED = (
        "pack.instance_mixed",
        "the rows mix tasks drawn from the bundle's instance seed with tasks of another seed",
    )
    PACK_INSTANCE_COMMITMENT = (
        "pack.instance_commitment",
        "the instance's commitment does not verify, or names another system or pack",
    )
    PACK_INSTANCE_CONFIGURATION = (
        "pack.instance_configuration",
        "the configuration the bundle declares (harness, model, file hash) is not the committed "
        "digest, or not the bundle's baseline",
    )
    PACK_INSTANCE_COMMITMENT_SIGNER = (
        "pack.instance_commitment_signer",
        "the commitment's signer differs from the bundle's",
    )
    PACK_INSTANCE_COMMITMENT_TIME = (
        "pack.instance_commitment_time",
        "the commitment was integrated in the transparency log after the run started, or "
        "after its beacon round was published",
    )
    PACK_INSTANCE_BEACON = (
        "pack.instance_beacon",
        "the beacon round does not verify under the pinned chain, or no chain is pinned",
    )
    PACK_INSTANCE_ROUND = (
        "pack.instance_round",
        "the beacon round is not the commitment's: the first published after its integrated "
        "time plus the stated delay",
    )
    PACK_INSTANCE_DERIVED_SEED = (
        "pack.instance_derived_seed",
        "the instance seed is not the one derived from the committed log entry and the beacon",
    )
    PACK_INSTANCE_PAYLOAD = (
        "pack.instance_payload",
        "a receipt's payload was not drawn from the bundle's instance seed (or it has no receipts)",
    )

    RESCORE_TRUE_STATE = (
        "rescore.true_state",
        "the oracle reading does not name exactly one true state",
    )
    RESCORE_UNSCOREABLE = (
        "rescore.unscoreable",
        "an indeterminate oracle reading was scored instead of dropped",
    )
    RESCORE_OUTCOME = "rescore.outcome", "the row's outcome differs from the truth table's label"
    RESCORE_REPORTED_SUCCESS = (
        "rescore.reported_success",
        "the row's labels fit only the opposite agent.reported_success",
    )
    RESCORE_SWER_VARIANT = (
        "rescore.swer_variant",
        "the row's swer_variant differs from the truth table's",
    )

    RECEIPT_MALFORMED = (
        "receipt.malformed",
        "a line of receipts.jsonl is not a receipt (JSON, fields, types, length)",
    )
    RECEIPT_MISSING = (
        "receipt.missing",
        "a scored row has no receipt (a bundle of format 2 has one per row)",
    )
    RECEIPT_EXTRA = "receipt.extra", "a receipt for an episode that has no row"
    RECEIPT_ORDER = (
        "receipt.order",
        "a receipt stands on another row's line (line i of receipts.jsonl is row i's receipt)",
    )
    RECEIPT_TASK = (
        "receipt.task",
        "a receipt's task (title, category, substrate, correct action, mechanism) is not the "
        "pack's",
    )
    RECEIPT_CLAIM = "receipt.claim", "a receipt's claim differs from its row's agent report"
    RECEIPT_READING = "receipt.reading", "a receipt's oracle reading differs from its row's"
    RECEIPT_OUTCOME = (
        "receipt.outcome",
        "the truth table, asked with a receipt's claim, reading and task, gives another label "
        "than the receipt's truth row or its row",
    )
    RECEIPT_EVIDENCE = (
        "receipt.evidence",
        "a receipt's expected-versus-actual readings contradict the pack's contract, the judge, "
        "its change set or its reading",
    )
    RECEIPT_CHANGE_SET = (
        "receipt.change_set",
        "a receipt's change set names a table the pack does not have, or misstates the "
        "untouched tables, or is missing",
    )
    RECEIPT_COLLATERAL = (
        "receipt.collateral",
        "a receipt's collateral marks differ from what the task's allowed change set gives",
    )
    RECEIPT_THINNED = (
        "receipt.thinned",
        "a receipt's change set lacks what its oracle reading reports: a write that persisted, "
        "the collateral changes its reason names, the records its evidence says were lost",
    )
    RECEIPT_FRAMES = (
        "receipt.frames",
        "a receipt on a screen substrate lacks its first, report or last frame",
    )
    RECEIPT_FRAME_NAME = (
        "receipt.frame_name",
        "a frame name is not <sha256>.webp or <sha256>.png (a path, a folder, another name)",
    )
    RECEIPT_FRAME_MISSING = "receipt.frame_missing", "a frame a receipt names is not in frames/"
    RECEIPT_FRAME_HASH = (
        "receipt.frame_hash",
        "a frame file's bytes do not have the sha256 its name states",
    )
    RECEIPT_FRAME_IMAGE = (
        "receipt.frame_image",
        "a frame is not a WebP or PNG image that decodes to its header's size, or exceeds the "
        "size limits (bytes, pixels, metadata)",
    )
    RECEIPT_FRAME_PIXELS = (
        "receipt.frame_pixels",
        "a frame decodes to more pixels than one frame may, or the bundle's frames together "
        "to more than a bundle's may (read from each image's header, never decoded)",
    )
    RECEIPT_FRAME_UNREFERENCED = (
        "receipt.frame_unreferenced",
        "frames/ holds a frame no receipt names",
    )
    RECEIPT_MARKUP = (
        "receipt.markup",
        "a receipt text holds HTML markup or a script address (receipts are plain text)",
    )

    CLAIMS_MISSING_FIELD = "claims.missing_field", "a results field (or the block) is missing"
    CLAIMS_EXTRA_FIELD = "claims.extra_field", "a results field the rows do not give"
    CLAIMS_MISSING_CELL = (
        "claims.missing_cell",
        "a (category x substrate) cell of the rows is not claimed",
    )
    CLAIMS_EXTRA_CELL = "claims.extra_cell", "a claimed cell has no rows, or is listed twice"
    CLAIMS_COUNT = "claims.count", "a claimed count differs from the recomputed one"
    CLAIMS_RATE = "claims.rate", "a claimed number differs from the recomputed one by over 1e-9"
    CLAIMS_VALUE = "claims.value", "a claimed label differs from the recomputed one"
    CLAIMS_TYPE = "claims.type", "a claimed value has the wrong JSON type"

    SIGNATURE_MISSING = (
        "signature.missing",
        "the submission is unsigned, not reproduced, and unsigned previews are not allowed",
    )
    SIGNATURE_NO_SIGNER = (
        "signature.no_signer",
        "a signature is present but submission.json declares no signer",
    )
    SIGNATURE_UNAVAILABLE = (
        "signature.unavailable",
        "signature verification is not installed here",
    )
    SIGNATURE_MALFORMED = (
        "signature.malformed",
        "submission.sigstore.json is not a readable Sigstore DSSE bundle",
    )
    SIGNATURE_INVALID = "signature.invalid", "the Sigstore bundle does not verify"
    SIGNATURE_UNTRUSTED = (
        "signature.untrusted",
        "the signature does not chain to the trusted Sigstore root",
    )
    SIGNATURE_WRONG_ISSUER = (
        "signature.wrong_issuer",
        "the certificate's OIDC issuer is not the declared signer.issuer",
    )
    SIGNATURE_WRONG_IDENTITY = (
        "signature.wrong_identity",
        "the certificate's identity is not the declared signer.identity",
    )
    SIGNATURE_ISSUER_NOT_ACCEPTED = (
        "signature.issuer_not_accepted",
        "the declared OIDC issuer is not in the leaderboard policy",
    )
    SIGNATURE_PAYLOAD_TYPE = (
        "signature.payload_type",
        "the signed payload is not an in-toto Statement",
    )
    SIGNATURE_STATEMENT = "signature.statement", "the signed in-toto Statement is malformed"
    SIGNATURE_PREDICATE_TYPE = (
        "signature.predicate_type",
        "the signed Statement is not about an EffectBench submission",
    )
    SIGNATURE_SUBJECT_ADDED = (
        "signature.subject_added",
        "a bundle file is not covered by the signature",
    )
    SIGNATURE_SUBJECT_REMOVED = (
        "signature.subject_removed",
        "a signed file is missing from the bundle",
    )
    SIGNATURE_SUBJECT_CHANGED = "signature.subject_changed", "a bundle file changed after signing"
    SIGNATURE_SUBJECT_SYMLINK = "signature.subject_symlink", "a bundle file is a symbolic link"
    SIGNATURE_PREDICATE = (
        "signature.predicate",
        "the signed predicate's spec_version or tool differs from submission.json",
    )
    SIGNATURE_REPRODUCED_IDENTITY = (
        "signature.reproduced_identity",
        "unsigned and re-run, but its name, URL, README or description are not the baseline's",
    )
    SIGNATURE_REPRODUCED_UNLISTED = (
        "signature.reproduced_unlisted",
        "unsigned and re-run, but not a maintainers' reference bundle (content hash unlisted)",
    )
    SIGNATURE_SUBJECT_NOT_REGULAR = (
        "signature.subject_not_regular",
        "a bundle entry is not a regular file",
    )

    REPRODUCE_UNKNOWN_BASELINE = (
        "reproduce.unknown_baseline",
        "system.baseline is not a shipped baseline of the pack",
    )
    REPRODUCE_TOO_LARGE = (
        "reproduce.too_large",
        "the re-run would run more episodes than allowed (--max-reproduce-rows)",
    )
    REPRODUCE_DROPPED = "reproduce.dropped", "the re-run drops another number of trials"
    REPRODUCE_MISMATCH = "reproduce.mismatch", "a row differs from the re-run's (timings aside)"
    REPRODUCE_EXTRA_ROW = "reproduce.extra_row", "a row the re-run does not give"
    REPRODUCE_MISSING_ROW = "reproduce.missing_row", "a row of the re-run the bundle lacks"
    REPRODUCE_CHANGE_SET = (
        "reproduce.change_set",
        "the re-run's change set of a (task, trial) differs from its receipt's",
    )
    REPRODUCE_UNAVAILABLE = (
        "reproduce.unavailable",
        "a re-run is needed (no reproduction record) but a component it needs is not installed "
        "here (named, with how to install it; make reproduce)",
    )
    REPRODUCE_RECORD_MALFORMED = (
        "reproduce.record_malformed",
        "the reproduction record is not a readable record (truncated, not JSON, not a Sigstore "
        "DSSE bundle, or fields missing)",
    )
    REPRODUCE_RECORD_FORGED = (
        "reproduce.record_forged",
        "the reproduction record's signature does not verify (altered or forged) or does not "
        "chain to the trusted root, or a machine-local record's seal is not this machine's",
    )
    REPRODUCE_RECORD_UNLISTED = (
        "reproduce.record_unlisted",
        "an unsigned (maintainers') reproduction record whose bytes the reference list does not "
        "give for this bundle (altered, replaced, or for a bundle that is no listed reference)",
    )
    REPRODUCE_RECORD_SIGNER = (
        "reproduce.record_signer",
        "the reproduction record is signed by an identity the record policy does not list",
    )
    REPRODUCE_RECORD_SUBJECT = (
        "reproduce.record_subject",
        "the reproduction record is for other bytes (its subject is not this bundle's content "
        "hash)",
    )
    REPRODUCE_RECORD_EXPIRED = (
        "reproduce.record_expired",
        "the reproduction record is past its lifetime, or was made by another code or pack version",
    )

    RANKING_DUPLICATE = (
        "ranking.duplicate",
        "a byte- or row-identical copy of a bundle verified earlier (not ranked twice)",
    )
    RANKING_REFERENCE_COPY = (
        "ranking.reference_copy",
        "measured the same as a maintainers' reference bundle on every (task, trial)",
    )
    RANKING_UNRENDERED = (
        "ranking.unrendered",
        "the site could not render the bundle (the error is named): it is withheld from the "
        "board and the build goes on",
    )
    RANKING_WITHDRAWN = (
        "ranking.withdrawn",
        "the bundle's content hash (or rows hash) is on the maintainers' withdrawn list, or it "
        "measured the same as a withdrawn bundle",
    )

    MONITOR_FILES = (
        "monitor.files",
        "a monitor bundle lacks monitor.json or scores.jsonl, or holds another file, a folder "
        "or a link",
    )
    MONITOR_MANIFEST = (
        "monitor.manifest",
        "monitor.json is not a monitor manifest (JSON, fields, types, lengths)",
    )
    MONITOR_SCORE_LINE = (
        "monitor.score_line",
        "a line of scores.jsonl is not a score (JSON, fields, types, length, too many lines)",
    )
    MONITOR_NON_FINITE = "monitor.non_finite", "a score, cost or latency is NaN or infinite"
    MONITOR_MISSING_EPISODE = "monitor.missing_episode", "an episode of the corpus has no score"
    MONITOR_DUPLICATE_EPISODE = (
        "monitor.duplicate_episode",
        "an episode is scored more than once",
    )
    MONITOR_UNKNOWN_EPISODE = (
        "monitor.unknown_episode",
        "a score for an episode the corpus does not hold",
    )
    MONITOR_FORBIDDEN_READ = (
        "monitor.forbidden_read",
        "the monitor declares it reads a field outside the overseer's view (what the oracle "
        "read, the label, or what names the task, its fault or the system)",
    )
    MONITOR_CORPUS = (
        "monitor.corpus",
        "the scores are of another corpus (name, version or digest) than the board's",
    )
    MONITOR_LABELS = (
        "monitor.labels",
        "a label file does not match the corpus (another digest, or other episodes)",
    )
    MONITOR_CLAIMS = (
        "monitor.claims",
        "a measured or claimed number of monitor.json differs from the one recomputed from "
        "the scores (over 1e-9)",
    )
    MONITOR_CORPUS_SOURCE = (
        "monitor.corpus_source",
        "a source bundle of the locked corpus is missing, changed since it was locked, or not "
        "verified here, or the corpus made from them has another digest",
    )


@dataclass(frozen=True)
class Finding:
    """One reason a submission is refused (or a note on it)."""

    check: CheckId
    """Stable check id, ``family.rule`` (for example ``rescore.outcome``)."""
    message: str
    """What is wrong and what to do about it, in a sentence."""
    file: str | None = None
    """The bundle-relative file the finding is about."""
    line: int | None = None
    """1-based line (for ``episodes.jsonl``, the row) where it applies."""
    field: str | None = None
    """Dotted field path inside the row or document."""


def check_table() -> str:
    """Return the Markdown table of every check id (the docs' copy of the registry)."""
    lines = ["| id | family | meaning |", "|---|---|---|"]
    lines += [f"| `{c.value}` | {c.family.value} | {c.meaning} |" for c in CheckId]
    return "\n".join(lines)


def generated_section(text: str, begin: str, end: str) -> str | None:
    """Return what a docs page holds between the markers ``begin`` and ``end`` (None: no
    markers)."""
    try:
        return text[text.index(begin) + len(begin) : text.index(end)]
    except ValueError:
        return None


def with_generated_section(text: str, begin: str, end: str, body: str) -> str:
    """Return the docs page ``text`` with what stands between its markers replaced by ``body``."""
    start, stop = text.index(begin) + len(begin), text.index(end)
    return text[:start] + "\n" + body + "\n" + text[stop:]


_ID_ROW = re.compile(r"^\| `([^`]+)` \| ([^|]+?) \| (.+) \|$")


def id_table_rows(text: str, begin: str, end: str) -> list[tuple[str, str, str]]:
    """Return the ``(id, group, meaning)`` rows of a generated id table between markers."""
    section = generated_section(text, begin, end) or ""
    return [(m[1], m[2], m[3]) for ln in section.splitlines() if (m := _ID_ROW.match(ln.strip()))]


def docs_check_table(text: str) -> list[tuple[str, str, str]]:
    """Return the ``(id, family, meaning)`` rows of the check-id table in a docs page."""
    return id_table_rows(text, _BEGIN, _END)


def with_check_table(text: str) -> str:
    """Return the docs page ``text`` with its check-id table replaced by :func:`check_table`."""
    return with_generated_section(text, _BEGIN, _END, check_table())
