// The names this runtime's spans carry: the OpenTelemetry A2A and GenAI semantic conventions (development status, so
// kept here rather than imported from the package's incubating entry), and the runtime's own `a2a.*` additions. The
// stable names come from @opentelemetry/semantic-conventions where the SDK is loaded (setup.ts); the one every process
// needs is repeated here, because importing that package costs a process start ~0.1 s and a few MiB.

/** The stable `error.type` (ATTR_ERROR_TYPE of @opentelemetry/semantic-conventions). */
export const ATTR_ERROR_TYPE = "error.type";

/** The instrumentation scope of every span the runtime makes. */
export const TRACER_NAME = "a2a-runtime";

// A2A server spans (one per call, named after the method).
export const ATTR_A2A_METHOD_NAME = "a2a.method.name";
export const ATTR_A2A_PROTOCOL_VERSION = "a2a.protocol.version";
export const ATTR_A2A_PROTOCOL_BINDING = "a2a.protocol.binding";
export const ATTR_A2A_MESSAGE_ID = "a2a.message.id";
export const ATTR_A2A_TASK_ID = "a2a.task.id";
export const ATTR_A2A_TASK_STATE = "a2a.task.state";
export const ATTR_GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";
export const ATTR_GEN_AI_AGENT_NAME = "gen_ai.agent.name";

// The runtime's own: the run behind a task, its attempts, and how waits and streams ended.
export const ATTR_A2A_RUN_ID = "a2a.run.id";
export const ATTR_A2A_RUN_ATTEMPT = "a2a.run.attempt";
export const ATTR_A2A_RUN_OUTCOME = "a2a.run.outcome";
export const ATTR_A2A_CLAIM_RESULT = "a2a.claim.result";
export const ATTR_A2A_WAIT_OUTCOME = "a2a.wait.outcome";
export const ATTR_A2A_STREAM_END = "a2a.stream.end";
export const ATTR_A2A_PUSH_CONFIG_ID = "a2a.push.config.id";
export const ATTR_A2A_PUSH_OUTCOME = "a2a.push.outcome";

// GenAI client spans (model calls) and tool executions.
export const ATTR_GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
export const ATTR_GEN_AI_PROVIDER_NAME = "gen_ai.provider.name";
export const ATTR_GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
export const ATTR_GEN_AI_RESPONSE_MODEL = "gen_ai.response.model";
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons";
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens";
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens";
export const ATTR_GEN_AI_TOOL_NAME = "gen_ai.tool.name";
export const ATTR_GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id";

// HTTP client spans (webhooks).
export const ATTR_HTTP_REQUEST_METHOD = "http.request.method";
export const ATTR_HTTP_RESPONSE_STATUS_CODE = "http.response.status_code";
export const ATTR_SERVER_ADDRESS = "server.address";
