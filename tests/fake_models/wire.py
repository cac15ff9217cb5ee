"""The four wire formats the fake speaks: each API reduces a request to a script.Turn, writes a
Step as a whole JSON response or as its stream events, and writes an error the way the real API
does. Token usage is fixed (USAGE) and written in each API's own fields.

    api = API_BY_FAMILY["anthropic"]
    turn = api.turn(body)                     # script.Turn
    events = api.events(step, model, ident)   # [(event name or None, JSON object), ...]
    whole = api.message(step, model, ident)   # the non-streamed JSON response
    body = api.error(429)                     # the API's error object for that status
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from fake_models.script import ShellTool, Step, Turn, shell_tool


@dataclass(frozen=True)
class Usage:
    """One response's usage: `input` counts every prompt token, cache reads (`cached`) and cache
    writes (`cache_write`) included; `output` every generated token."""

    input: int = 1000
    cached: int = 200
    cache_write: int = 100
    output: int = 50


USAGE = Usage()


def _shell_of(declarations) -> ShellTool | None:
    return shell_tool([(name, schema if isinstance(schema, dict) else {})
                       for name, schema in declarations if isinstance(name, str)])


# --- Anthropic Messages ---------------------------------------------------------------------------


class Anthropic:
    family = "anthropic"
    errors: ClassVar[dict] = {401: ("authentication_error", "invalid x-api-key"),
              404: ("not_found_error", "model: {model}"),
              429: ("rate_limit_error", "Number of request tokens has exceeded your rate limit"),
              500: ("api_error", "Internal server error"),
              529: ("overloaded_error", "Overloaded")}

    @staticmethod
    def turn(body: dict) -> Turn:
        tools = [(t.get("name"), t.get("input_schema")) for t in body.get("tools") or []
                 if isinstance(t, dict)]
        results = assistants = 0
        for message in body.get("messages") or []:
            if not isinstance(message, dict):
                continue
            assistants += message.get("role") == "assistant"
            content = message.get("content")
            if isinstance(content, list):
                results += sum(1 for block in content
                               if isinstance(block, dict) and block.get("type") == "tool_result")
        return Turn(_shell_of(tools), results, assistants)

    @staticmethod
    def usage(output: int) -> dict:
        return {"input_tokens": USAGE.input - USAGE.cached - USAGE.cache_write,
                "cache_creation_input_tokens": USAGE.cache_write,
                "cache_read_input_tokens": USAGE.cached, "output_tokens": output}

    def _block(self, step: Step, turn: Turn, ident: str) -> dict:
        if step.kind == "tool":
            return {"type": "tool_use", "id": f"toolu_{ident}", "name": turn.shell.name,
                    "input": turn.shell.arguments(step.command)}
        return {"type": "text", "text": step.text}

    def message(self, step: Step, turn: Turn, model: str, ident: str) -> dict:
        return {"id": f"msg_{ident}", "type": "message", "role": "assistant", "model": model,
                "content": [self._block(step, turn, ident)],
                "stop_reason": "tool_use" if step.kind == "tool" else "end_turn",
                "stop_sequence": None, "usage": self.usage(USAGE.output)}

    def events(self, step: Step, turn: Turn, model: str, ident: str) -> list[tuple]:
        whole = self.message(step, turn, model, ident)
        block = whole["content"][0]
        start = {**whole, "content": [], "stop_reason": None, "usage": self.usage(1)}
        if block["type"] == "tool_use":
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        return [
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": opened}),
            ("ping", {"type": "ping"}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                               "usage": self.usage(USAGE.output)}),
            ("message_stop", {"type": "message_stop"}),
        ]

    def error(self, status: int, model: str) -> dict:
        kind, message = self.errors.get(status, self.errors[500])
        return {"type": "error", "error": {"type": kind, "message": message.format(model=model)}}


# --- OpenAI Responses -----------------------------------------------------------------------------


def _openai_error(status: int, model: str) -> dict:
    kind, code, message = {
        401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-fake."),
        404: ("invalid_request_error", "model_not_found",
              f"The model `{model}` does not exist or you do not have access to it."),
        429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests"),
    }.get(status, ("server_error", None, "The server had an error while processing your request."))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class Responses:
    family = "responses"

    @staticmethod
    def turn(body: dict) -> Turn:
        tools = [(t.get("name"), t.get("parameters")) for t in body.get("tools") or []
                 if isinstance(t, dict)]
        items = body.get("input") if isinstance(body.get("input"), list) else []
        results = sum(1 for i in items if isinstance(i, dict) and str(i.get("type", "")).endswith(
            "call_output"))
        assistants = sum(1 for i in items if isinstance(i, dict) and i.get("role") == "assistant")
        return Turn(_shell_of(tools), results, assistants)

    @staticmethod
    def usage() -> dict:
        return {"input_tokens": USAGE.input,
                "input_tokens_details": {"cached_tokens": USAGE.cached,
                                         "cache_write_tokens": USAGE.cache_write},
                "output_tokens": USAGE.output, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": USAGE.input + USAGE.output}

    def _item(self, step: Step, turn: Turn, ident: str) -> dict:
        if step.kind == "tool":
            return {"type": "function_call", "id": f"fc_{ident}", "call_id": f"call_{ident}",
                    "name": turn.shell.name, "status": "completed",
                    "arguments": json.dumps(turn.shell.arguments(step.command))}
        return {"type": "message", "id": f"msg_{ident}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}]}

    def message(self, step: Step, turn: Turn, model: str, ident: str) -> dict:
        return {"id": f"resp_{ident}", "object": "response", "created_at": 1764547200,
                "status": "completed", "model": model, "output": [self._item(step, turn, ident)],
                "usage": self.usage()}

    def events(self, step: Step, turn: Turn, model: str, ident: str) -> list[tuple]:
        whole = self.message(step, turn, model, ident)
        item = whole["output"][0]
        pending = {**whole, "status": "in_progress", "output": [], "usage": None}
        events = [("response.created", {"type": "response.created", "response": pending}),
                  ("response.output_item.added", {"type": "response.output_item.added",
                                                  "output_index": 0, "item": item})]
        if item["type"] == "message":
            events.append(("response.output_text.delta", {
                "type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                "content_index": 0, "delta": step.text}))
        events += [("response.output_item.done", {"type": "response.output_item.done",
                                                  "output_index": 0, "item": item}),
                   ("response.completed", {"type": "response.completed", "response": whole})]
        for number, (_name, event) in enumerate(events):
            event["sequence_number"] = number
        return events

    error = staticmethod(_openai_error)


# --- OpenAI chat completions ----------------------------------------------------------------------


class Chat:
    family = "chat"

    @staticmethod
    def turn(body: dict) -> Turn:
        tools = [((t.get("function") or {}).get("name"), (t.get("function") or {}).get("parameters"))
                 for t in body.get("tools") or [] if isinstance(t, dict)]
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        return Turn(_shell_of(tools), sum(m.get("role") == "tool" for m in messages),
                    sum(m.get("role") == "assistant" for m in messages))

    @staticmethod
    def usage() -> dict:
        return {"prompt_tokens": USAGE.input, "completion_tokens": USAGE.output,
                "total_tokens": USAGE.input + USAGE.output,
                "prompt_tokens_details": {"cached_tokens": USAGE.cached}}

    def _message(self, step: Step, turn: Turn, ident: str) -> dict:
        if step.kind == "tool":
            return {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{ident}", "type": "function", "function": {
                    "name": turn.shell.name,
                    "arguments": json.dumps(turn.shell.arguments(step.command))}}]}
        return {"role": "assistant", "content": step.text}

    def message(self, step: Step, turn: Turn, model: str, ident: str) -> dict:
        return {"id": f"chatcmpl-{ident}", "object": "chat.completion", "created": 1764547200,
                "model": model, "choices": [{
                    "index": 0, "message": self._message(step, turn, ident),
                    "finish_reason": "tool_calls" if step.kind == "tool" else "stop"}],
                "usage": self.usage()}

    def events(self, step: Step, turn: Turn, model: str, ident: str) -> list[tuple]:
        whole = self.message(step, turn, model, ident)
        choice = whole["choices"][0]
        delta = dict(choice["message"])
        if "tool_calls" in delta:
            delta["tool_calls"] = [{**call, "index": 0} for call in delta["tool_calls"]]
        base = {"id": whole["id"], "object": "chat.completion.chunk", "created": whole["created"],
                "model": model}
        return [(None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
                (None, {**base, "choices": [{"index": 0, "delta": {},
                                             "finish_reason": choice["finish_reason"]}]}),
                (None, {**base, "choices": [], "usage": self.usage()})]

    error = staticmethod(_openai_error)


# --- Gemini generateContent -----------------------------------------------------------------------


class Gemini:
    family = "gemini"

    @staticmethod
    def turn(body: dict) -> Turn:
        tools = []
        for tool in body.get("tools") or []:
            for declaration in (tool.get("functionDeclarations") or []) if isinstance(tool, dict) else []:
                if isinstance(declaration, dict):
                    tools.append((declaration.get("name"), declaration.get("parameters")
                                  or declaration.get("parametersJsonSchema")))
        results = assistants = 0
        for content in body.get("contents") or []:
            if not isinstance(content, dict):
                continue
            assistants += content.get("role") == "model"
            results += sum(1 for part in content.get("parts") or []
                           if isinstance(part, dict) and "functionResponse" in part)
        return Turn(_shell_of(tools), results, assistants)

    @staticmethod
    def usage() -> dict:
        return {"promptTokenCount": USAGE.input, "candidatesTokenCount": USAGE.output,
                "cachedContentTokenCount": USAGE.cached,
                "totalTokenCount": USAGE.input + USAGE.output}

    def message(self, step: Step, turn: Turn, model: str, ident: str) -> dict:
        if step.kind == "tool":
            part = {"functionCall": {"name": turn.shell.name,
                                     "args": turn.shell.arguments(step.command)}}
        else:
            part = {"text": step.text}
        return {"candidates": [{"content": {"role": "model", "parts": [part]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": self.usage(), "modelVersion": model, "responseId": ident}

    def events(self, step: Step, turn: Turn, model: str, ident: str) -> list[tuple]:
        return [(None, self.message(step, turn, model, ident))]

    @staticmethod
    def error(status: int, model: str) -> dict:
        state, message = {
            401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
            404: ("NOT_FOUND", f"models/{model} is not found for API version v1beta"),
            429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
        }.get(status, ("INTERNAL", "An internal error has occurred."))
        return {"error": {"code": status, "message": message, "status": state}}


API_BY_FAMILY = {api.family: api for api in (Anthropic(), Responses(), Chat(), Gemini())}
