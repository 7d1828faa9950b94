"""The Python SDK driver: runs a step list over one `ClientSession` connection to one server.

Reads `{"server": {command, args, env, cwd?}, "steps": [...]}` (JSON) on stdin and prints
`{"transcript": [...], "protocol": {offered, negotiated}}` as canonical JSON (keys sorted, no
spaces) on stdout; the server's stderr passes through to this process's. The step format,
the entries, the placeholder rule and the error codes are those of steps.ts (change both
together); wire names are kept (camelCase), Python's field names never reach the transcript.

The stdio connection is made here, the way the SDK's `stdio_client` makes it (same
environment rule, same line framing and parsing, same shutdown), because `stdio_client`
hides the server's pipes: a raw step writes to that stdin, and the server's answer to it
is taken out before the session sees it.
"""

import json
import re
import sys
import time
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.text import TextReceiveStream
from mcp.client.session import ClientSession
from mcp.client.stdio import _stop_server_process, get_default_environment
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter

RAW_ANSWER_SECONDS = 5.0
DEFAULT_TIMEOUT_MS = 60_000
ANY_RESULT = TypeAdapter(dict[str, Any])
WHOLE = re.compile(r"^\$\{([^}]+)\}$")
INSIDE = re.compile(r"\$\{([^}]+)\}")


class PlaceholderError(Exception):
    pass


def lookup(ref: str, entries: dict[str, Any]) -> Any:
    step_id, *path = ref.split(".")
    if step_id not in entries:
        raise PlaceholderError(f"placeholder ${{{ref}}}: no earlier step '{step_id}'")
    value = entries[step_id]
    for key in path:
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            raise PlaceholderError(f"placeholder ${{{ref}}}: no '{key}' there")
    return value


def resolve(value: Any, entries: dict[str, Any]) -> Any:
    """`value` with its placeholders replaced (steps.ts' resolvePlaceholders)."""
    if isinstance(value, str):
        whole = WHOLE.match(value)
        if whole:
            return lookup(whole.group(1), entries)

        def text(match: re.Match[str]) -> str:
            found = lookup(match.group(1), entries)
            return found if isinstance(found, str) else json_text(found)

        return INSIDE.sub(text, value)
    if isinstance(value, list):
        return [resolve(v, entries) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, entries) for k, v in value.items()}
    return value


def plain_numbers(value: Any) -> Any:
    """Whole floats as ints, as JavaScript prints them (the SDK's progress values are floats)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [plain_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: plain_numbers(v) for k, v in value.items()}
    return value


def json_text(value: Any) -> str:
    return json.dumps(plain_numbers(value), separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    return json.dumps(plain_numbers(value), separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def wire(model: Any) -> Any:
    """A pydantic model as the wire has it (camelCase, absent fields left out)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def raw_id(line: str) -> str:
    found = re.search(r'"id"\s*:\s*"([^"]*)"', line) or re.search(r'"id"\s*:\s*(-?\d+)', line)
    return found.group(1) if found else ""


class Connection:
    """The server process and its pipes, with the session's streams and the raw lines' tap."""

    def __init__(self, process: Any) -> None:
        self.process = process
        self.read_writer, self.read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        self.write_stream, self.write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        self.stdin_lock = anyio.Lock()
        self.sent: list[dict[str, Any]] = []
        self.errors: dict[Any, dict[str, Any]] = {}
        self.raw_ids: set[str] = set()
        self.waiting: dict[str, Any] = {}

    def is_raw_answer(self, message: Any) -> bool:
        if not isinstance(message, dict) or ("result" not in message and "error" not in message):
            return False
        rid = message.get("id")
        return rid is None or (isinstance(rid, str) and rid in self.raw_ids)

    async def stdout_reader(self) -> None:
        stdout = TextReceiveStream(self.process.stdout, encoding="utf-8")
        async with self.read_writer:
            buffer = ""
            try:
                async for chunk in stdout:
                    lines = (buffer + chunk).split("\n")
                    buffer = lines.pop()
                    for line in lines:
                        await self.take(line)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

    async def take(self, line: str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and isinstance(message.get("error"), dict) and "id" in message:
            self.errors[message["id"]] = message["error"]
        if self.is_raw_answer(message):
            rid = message.get("id")
            waiter = self.waiting.get(rid) if rid is not None else next(iter(self.waiting.values()), None)
            if waiter is not None:
                waiter.append(message)
            return
        try:
            parsed: SessionMessage | Exception = SessionMessage(
                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            )
        except ValueError as exc:
            parsed = exc
        await self.read_writer.send(parsed)

    async def stdin_writer(self) -> None:
        async with self.write_reader:
            async for session_message in self.write_reader:
                text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                self.sent.append(json.loads(text))
                async with self.stdin_lock:
                    await self.process.stdin.send((text + "\n").encode())

    async def raw(self, line: str) -> Any:
        rid = raw_id(line)
        self.raw_ids.add(rid)
        answers: list[Any] = []
        self.waiting[rid] = answers
        try:
            async with self.stdin_lock:
                await self.process.stdin.send((line + "\n").encode())
            with anyio.move_on_after(RAW_ANSWER_SECONDS):
                while not answers:
                    await anyio.sleep(0.01)
        finally:
            del self.waiting[rid]
        return answers[0] if answers else None

    def classify(self, err: BaseException, sent: list[dict[str, Any]]) -> dict[str, Any]:
        """A raised error as steps.ts' StepError: the server's own when it sent one for the step."""
        for message in sent:
            if "method" in message and "id" in message and message["id"] in self.errors:
                error = self.errors[message["id"]]
                return {"code": error.get("code"), "message": error.get("message")}
        if not any("method" in m and "id" in m for m in sent):
            return {"code": "CLIENT_REQUEST", "message": str(err)}
        if isinstance(err, MCPError) and err.code == types.REQUEST_TIMEOUT:
            return {"code": "CLIENT_TIMEOUT", "message": err.message}
        if isinstance(err, MCPError) and err.code == types.CONNECTION_CLOSED:
            return {"code": "CLIENT_CLOSED", "message": err.message}
        return {"code": "CLIENT_VALIDATION", "message": str(err)}


def progress_of(progress: float, total: float | None, message: str | None) -> dict[str, Any]:
    return {"progress": progress, "total": total, "message": message}


def call_result(result: types.CallToolResult) -> dict[str, Any]:
    dumped = wire(result)
    return {
        "content": dumped.get("content", []),
        "structuredContent": dumped.get("structuredContent"),
        "isError": result.is_error is True,
    }


async def run_step(session: ClientSession, conn: Connection, step: dict[str, Any], before: int) -> dict[str, Any]:
    op = step["op"]
    timeout = step.get("timeoutMs", DEFAULT_TIMEOUT_MS) / 1000
    if op == "list":
        return {"tools": [wire(tool) for tool in (await session.list_tools()).tools]}
    if op == "call":
        progress: list[dict[str, Any]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(progress_of(value, total, message))

        try:
            result = await session.call_tool(
                step["tool"], step.get("args", {}), timeout, on_progress if step.get("progress") else None
            )
            return {"result": call_result(result), "progress": progress}
        except Exception as err:  # noqa: BLE001 - every failure becomes the entry's error
            return {"error": conn.classify(err, conn.sent[before:]), "progress": progress}
    if op == "request":
        request = types.Request[Any, str](method=step["method"], params=step.get("params"))
        try:
            return {"result": await session.send_request(request, ANY_RESULT, timeout)}
        except Exception as err:  # noqa: BLE001
            return {"error": conn.classify(err, conn.sent[before:])}
    if op == "raw":
        return {"response": await conn.raw(step["line"])}
    if op == "cancel":
        return await cancel(session, conn, step, before, timeout)
    raise ValueError(f"unknown op {op!r}")


async def cancel(
    session: ClientSession, conn: Connection, step: dict[str, Any], before: int, timeout: float
) -> dict[str, Any]:
    """A call cancelled the SDK's way (its task's cancel scope) after n progress notifications or n ms."""
    after = step["after"]
    progress: list[dict[str, Any]] = []
    outcome: dict[str, Any] = {}
    enough = anyio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(progress_of(value, total, message))
        if "progress" in after and len(progress) >= after["progress"]:
            enough.set()

    async def call(scope: anyio.CancelScope) -> None:
        with scope:
            try:
                outcome["result"] = await session.call_tool(step["tool"], step.get("args", {}), timeout, on_progress)
            except Exception as err:  # noqa: BLE001
                outcome["error"] = err
        enough.set()

    scope = anyio.CancelScope()
    async with anyio.create_task_group() as tg:
        tg.start_soon(call, scope)
        if "ms" in after:
            with anyio.move_on_after(after["ms"] / 1000):
                await enough.wait()
        else:
            await enough.wait()
        scope.cancel()
    if "result" in outcome:
        return {"result": call_result(outcome["result"]), "progress": progress}
    if "error" in outcome:
        return {"error": conn.classify(outcome["error"], conn.sent[before:]), "progress": progress}
    # The courtesy notifications/cancelled is written as the call unwinds: give the writer a moment.
    with anyio.move_on_after(1):
        while not notified(conn.sent[before:]):
            await anyio.sleep(0.01)
    return {"cancelled": True, "progress": progress, "notified": notified(conn.sent[before:])}


def notified(sent: list[dict[str, Any]]) -> bool:
    call = next((m for m in sent if m.get("method") == "tools/call"), None)
    return call is not None and any(
        m.get("method") == "notifications/cancelled" and (m.get("params") or {}).get("requestId") == call.get("id")
        for m in sent
    )


async def run(server: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    process = await anyio.open_process(
        [server["command"], *server.get("args", [])],
        env=get_default_environment() | server.get("env", {}),
        stderr=sys.stderr,
        cwd=server.get("cwd"),
        start_new_session=True,
    )
    conn = Connection(process)
    transcript: list[dict[str, Any]] = []
    negotiated = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(conn.stdout_reader)
        tg.start_soon(conn.stdin_writer)
        try:
            client_info = types.Implementation(name="mcp-clients-python", version="1.0.0")
            async with ClientSession(conn.read_stream, conn.write_stream, client_info=client_info) as session:
                negotiated = (await session.initialize()).protocol_version
                entries: dict[str, Any] = {}
                for step in steps:
                    started = time.monotonic()
                    before = len(conn.sent)
                    try:
                        body = await run_step(session, conn, resolve(step, entries), before)
                    except PlaceholderError as err:
                        body = {"error": {"code": "DRIVER_PLACEHOLDER", "message": str(err)}}
                    entry = {"id": step["id"], **body, "ms": round((time.monotonic() - started) * 1000)}
                    transcript.append(entry)
                    entries[step["id"]] = entry
        finally:
            with anyio.CancelScope(shield=True):
                conn.write_stream.close()
                await _stop_server_process(process)
            tg.cancel_scope.cancel()
    offered = next((m["params"].get("protocolVersion") for m in conn.sent if m.get("method") == "initialize"), None)
    return {"transcript": transcript, "protocol": {"offered": offered, "negotiated": negotiated}}


def main() -> None:
    spec = json.load(sys.stdin)
    outcome = anyio.run(run, spec["server"], spec["steps"])
    sys.stdout.write(canonical_json(outcome) + "\n")


if __name__ == "__main__":
    main()
