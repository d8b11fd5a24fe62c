"""The in-process gRPC server the wire-level fakes run on: unary methods of proto-plus request/response types."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc

# service → method → (handler(request, context), request type, response type)
Handlers = dict[str, dict[str, tuple[Callable[[Any, grpc.ServicerContext], Any], Any, Any]]]


def serve_unary(
    handlers: Handlers, *, thread_name_prefix: str, max_workers: int = 4, options: Sequence[tuple[str, Any]] = ()
) -> tuple[grpc.Server, str]:
    """Start a server on a free local port; (server, "127.0.0.1:<port>") for the client's api_endpoint."""
    server = grpc.server(
        ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=thread_name_prefix), options=list(options)
    )
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                service,
                {
                    method: grpc.unary_unary_rpc_method_handler(
                        fn, request_deserializer=req.deserialize, response_serializer=resp.serialize
                    )
                    for method, (fn, req, resp) in methods.items()
                },
            )
            for service, methods in handlers.items()
        ]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"
