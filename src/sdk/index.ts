// The sdk area (`import { fromAgentExecutor } from "a2a-runtime/sdk"`): runs an @a2a-js/sdk AgentExecutor as a
// handler. The only code that imports @a2a-js/sdk; nothing else in the runtime loads it.
export { type ExecutorHandlerOptions, fromAgentExecutor } from "./executor-handler.ts";
