// The entry file that moves the two SDK agents onto a2a-runtime: instead of DefaultRequestHandler and an Express
// server, each executor becomes a handler that workers load with --handlers. The executors are unchanged.
import { fromAgentExecutor } from "../../../src/sdk/index.ts";
import { GreeterAgentExecutor } from "./greeter-executor.ts";
import { StoryAgentExecutor } from "./story-executor.ts";

export const story = fromAgentExecutor("story", new StoryAgentExecutor());
export const greeter = fromAgentExecutor("greeter", new GreeterAgentExecutor());
