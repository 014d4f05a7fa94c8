"""Load stack and health-check files, turning every problem into one ``StackError`` that
names the file, the line, the site and the field."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import yaml
from pydantic import ValidationError

from sitectl.errors import StackError
from sitectl.paths import REPO_ROOT
from sitectl.stack.model import HealthSpec, SiteKind, Stack

#: Folder of the stack files shipped with sitectl (``stacks/`` at the project root).
#: ``SITECTL_STACKS_DIR`` overrides it.
STACKS_DIR = Path(os.environ.get("SITECTL_STACKS_DIR", REPO_ROOT / "stacks"))
#: Folder of the health-check files (``healthchecks/``); ``SITECTL_HEALTHCHECKS_DIR`` overrides.
HEALTHCHECKS_DIR = Path(
    os.environ.get("SITECTL_HEALTHCHECKS_DIR", REPO_ROOT / "healthchecks")
)


def resolve_stack_path(stack: str) -> Path:
    """Map a ``--stack`` value to a file: a shipped stack name (``mini``, ``webarena``) or a path
    (symbolic links resolved).

    Raises:
        StackError: neither a shipped stack nor an existing file.
    """
    return _named_stack_path(stack).resolve()


def _named_stack_path(stack: str) -> Path:
    """The file a ``--stack`` value names, absolute, symbolic links not resolved.

    Raises:
        StackError: neither a shipped stack nor an existing file, or a name the system refuses.
    """
    p = Path(stack)
    try:
        if p.suffix in (".yaml", ".yml") or os.sep in stack:
            if not p.is_file():
                raise StackError(f"{stack}: stack file not found")
            return Path(os.path.abspath(p))
        shipped = STACKS_DIR / f"{stack}.yaml"
        if shipped.is_file():
            return shipped
    except OSError as e:  # e.g. a name longer than the system allows
        raise StackError(f"{stack[:200]}: cannot use this stack file: {e.strerror}") from None
    names = sorted(f.stem for f in STACKS_DIR.glob("*.yaml"))
    raise StackError(f"unknown stack {stack!r} (shipped: {', '.join(names)}; or give a .yaml path)")


def _node_at(node: yaml.Node | None, loc: tuple) -> yaml.Node | None:
    """Walk a composed YAML node along a pydantic error location; return the deepest match."""
    best = node
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if k.value == key), None)
            if nxt is None:
                # Unknown field: point at the key itself when it is there.
                k = next((k for k, _ in node.value if k.value == key), None)
                return k or best
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            continue  # pydantic adds loc parts (union tags, enum names) with no YAML node
        best = node
    return best


#: Every stack and health-check file read, by the absolute path it was named by (symbolic links
#: not resolved): ``(the path resolved, SHA-256 of the bytes read)`` (the last read; a
#: health-check file is read once per process, see :func:`load_health`).
_READ_DIGESTS: dict[str, tuple[str, str]] = {}


#: The largest stack file or healthcheck sitectl reads (bytes): ours are a few KiB.
MAX_YAML_BYTES = 4 << 20
#: The most nodes a YAML file may hold once its aliases are expanded (a "billion laughs" file
#: of ten lines expands to 10^9: refused while composing, before anything walks it).
MAX_YAML_NODES = 200_000


def _read_yaml(path: Path) -> tuple[object, yaml.Node | None]:
    try:
        if path.stat().st_size > MAX_YAML_BYTES:
            raise StackError(f"{path}: {path.stat().st_size} bytes; a stack file may have at most {MAX_YAML_BYTES}")
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except OSError as e:
        raise StackError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise StackError(f"{path}: not UTF-8 text (byte {e.start})") from None
    _READ_DIGESTS[os.path.abspath(path)] = (os.path.realpath(path), hashlib.sha256(raw).hexdigest())
    fast = getattr(yaml, "CSafeLoader", None)
    # libyaml takes some tabs the pure-Python parser refuses: a file with a tab takes that path.
    if fast is not None and "\t" not in text:
        try:
            return _parse_yaml(path, text, fast)
        except (yaml.YAMLError, StackError):
            pass  # parsed again below by the pure-Python loader, for its exact message and position
    try:
        return _parse_yaml(path, text, yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(e, "problem", None) or str(e)
        raise StackError(f"{where}: malformed YAML: {problem}") from None


def _parse_yaml(path: Path, text: str, loader_class) -> tuple[object, yaml.Node | None]:
    """The node tree of ``text`` (kept apart for error positions: constructing the data expands
    ``<<`` merges in place) with duplicate keys refused, and the data, each parsed by
    ``loader_class`` (libyaml's, when PyYAML has it, is about ten times faster at start-up).

    Raises:
        yaml.YAMLError: malformed YAML; StackError: a key given twice.
    """
    node = yaml.compose(text, Loader=loader_class)
    _check_nodes(path, node)
    return yaml.load(text, Loader=loader_class), node


def _check_nodes(path: Path, node) -> None:
    """One walk of the node tree: a key given twice in one mapping is an error (YAML loaders
    keep the last silently), and so is a tree whose aliases expand to more than
    :data:`MAX_YAML_NODES` nodes. Each node is visited once (a node reached again through an
    alias counts its memoised size), so the walk is linear in the file."""
    sizes: dict[int, int] = {}

    def size(n) -> int:
        if id(n) in sizes:
            return sizes[id(n)]
        sizes[id(n)] = 1  # a node that holds itself (a recursive alias) counts once
        if isinstance(n, yaml.MappingNode):
            seen: dict[str, int] = {}
            for k, _ in n.value:
                if isinstance(k, yaml.ScalarNode):
                    if k.value in seen:
                        raise StackError(f"{path}:{k.start_mark.line + 1}: key {k.value!r} given twice "
                                         f"(first at line {seen[k.value]})")
                    seen[k.value] = k.start_mark.line + 1
            kids = [x for kv in n.value for x in kv]
        else:
            kids = n.value if isinstance(n, yaml.SequenceNode) else []
        total = 1 + sum(size(k) for k in kids)
        sizes[id(n)] = total
        if total > MAX_YAML_NODES:
            raise StackError(f"{path}: its aliases (*name) expand to more than {MAX_YAML_NODES} nodes; "
                             "a stack file repeats a block with an anchor a few times, not nested anchors")
        return total

    if node is not None:
        try:
            size(node)
        except RecursionError:
            raise StackError(f"{path}: nested too deeply") from None


def _validation_error(path: Path, node, err: ValidationError, what: str) -> StackError:
    lines = []
    for e in err.errors():
        loc = tuple(e["loc"])
        n = _node_at(node, loc)
        line = f":{n.start_mark.line + 1}" if n is not None else ""
        parts = [str(x) for x in loc if not (isinstance(x, str) and x.startswith("function-"))]
        site = ""
        if len(loc) >= 2 and loc[0] == "sites":
            site = f" site {loc[1]!r}"
            parts = parts[2:]
        field = ".".join(parts) or "(top level)"
        msg = e["msg"].removeprefix("Value error, ")
        lines.append(f"{path}{line}:{site} field {field!r}: {msg}")
    return StackError(f"invalid {what}:\n  " + "\n  ".join(lines))


def _merge(base: dict, over: dict) -> dict:
    """Deep-merge ``over`` onto ``base``: mappings merge key by key, anything else replaces."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _read_stack_data(named: Path, seen: tuple[Path, ...] = ()) -> tuple[dict, yaml.Node | None, tuple[Path, ...]]:
    """Read a stack file (``named``: as named, links not resolved) and, recursively, the file it
    ``extends`` (merged underneath, named relative to this file's resolved folder); also
    returns the names of the files read, this one first."""
    path = named.resolve()
    if path in seen:
        raise StackError(f"{path}: 'extends' loops back to itself")
    data, node = _read_yaml(named)
    if not isinstance(data, dict):
        raise StackError(f"{path}: a stack file is a mapping with 'name' and 'sites'")
    if isinstance(data.get("images"), list):
        # An image's paths are relative to the file that declares it, also when another file
        # extends that one from elsewhere.
        for img in data["images"]:
            if isinstance(img, dict):
                img["base_dir"] = str(path.parent)
    parent = data.get("extends")
    if parent is None:
        return data, node, (named,)
    if not isinstance(parent, str):
        raise StackError(f"{path}: field 'extends' is a path to another stack file")
    ppath = path.parent / parent
    if not ppath.is_file():
        raise StackError(f"{path}: field 'extends': {parent} not found")
    base, _, read = _read_stack_data(ppath, seen + (path,))
    base.pop("images", None) if "images" in data else None
    return _merge(base, data), node, (named, *read)


def load_stack(stack: str | os.PathLike) -> Stack:
    """Load and validate a stack file.

    Args:
        stack: a shipped stack name (``"mini"``, ``"webarena"``) or a path to a YAML file.
            A file with ``extends: OTHER.yaml`` is deep-merged onto that file (mappings merge
            key by key; lists and scalars replace). Line numbers in errors refer to the file
            named, so a field inherited unchanged is reported at that file's top.

    Returns:
        The validated :class:`Stack`, with ``path`` set to the absolute file path.

    Raises:
        StackError: unreadable file, malformed YAML (with line and column), or an invalid
            field (with line, site and field), or a site whose health-check file is missing.
    """
    named = _named_stack_path(str(stack))
    path = named.resolve()
    data, node, read = _read_stack_data(named)
    if "sources" in data:
        raise StackError(f"{path}: field 'sources' is set by sitectl (the files read), not in a stack file")
    try:
        st = Stack.model_validate({**data, "path": str(path)})
    except ValidationError as e:
        raise _validation_error(path, node, e, "stack file") from None
    # Health-check files are read here, at load time (not mid-`up`).
    health = [load_health(health_ref(st, site)).path for site in st.sites.values()]
    files = dict.fromkeys(os.path.abspath(p) for p in (*read, *health))
    return st.model_copy(update={"sources": {f: _READ_DIGESTS[f] for f in files}})


_HEALTH_CACHE: dict[str, HealthSpec] = {}


def health_ref(stack: Stack, site) -> str:
    """Where ``site``'s probes are: ``healthchecks/<kind>.yaml`` unless the site's ``health``
    names another file (a bare name in ``healthchecks/``, or a ``.yaml`` path relative to the
    stack file)."""
    ref = site.health or site.kind.value
    if ref.endswith((".yaml", ".yml")):
        return os.path.abspath(Path(stack.path).parent / ref)
    return ref


def load_health(name: str) -> HealthSpec:
    """Load ``healthchecks/<name>.yaml``, or the file ``name`` when it is a ``.yaml`` path
    (cached per process).

    Raises:
        StackError: file missing, malformed, or invalid (file, line and field named).
    """
    if name in _HEALTH_CACHE:
        return _HEALTH_CACHE[name]
    path = Path(name) if name.endswith((".yaml", ".yml")) else HEALTHCHECKS_DIR / f"{name}.yaml"
    if not path.is_file():
        raise StackError(f"{path}: health-check file not found (kinds: {', '.join(k.value for k in SiteKind)})")
    data, node = _read_yaml(path)
    if not isinstance(data, dict):
        raise StackError(f"{path}: a health-check file is a mapping with 'kind' and 'probes'")
    try:
        spec = HealthSpec.model_validate({**data, "path": str(path)})
    except ValidationError as e:
        raise _validation_error(path, node, e, "health-check file") from None
    _HEALTH_CACHE[name] = spec
    return spec
