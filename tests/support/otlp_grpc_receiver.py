"""A minimal OTLP/gRPC trace receiver for tests/otlp_grpc.rs.

Listens on 127.0.0.1 (an ephemeral port), prints "port N" once ready, then one line per
received span: "span NAME TRACE_ID PARENT_SPAN_ID SPAN_ID service=NAME". Exits when its
standard input closes, so the test that started it stops it by closing the pipe (or by pid).
Needs the PyPI packages grpcio and opentelemetry-proto.
"""
import sys
import threading
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request, context):
        for resource_spans in request.resource_spans:
            service = next(
                (a.value.string_value for a in resource_spans.resource.attributes
                 if a.key == "service.name"),
                "",
            )
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    print("span", span.name.replace(" ", "_"), span.trace_id.hex(),
                          span.parent_span_id.hex() or "-", span.span_id.hex(),
                          "service=" + service, flush=True)
        return trace_service_pb2.ExportTraceServiceResponse()


server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(), server)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print("port", port, flush=True)
sys.stdin.read()
server.stop(0)
