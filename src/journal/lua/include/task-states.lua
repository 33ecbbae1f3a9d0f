--[[
  The task states the scripts branch on, kept once: terminal states are final; an interrupted task waits for its
  client (INPUT_REQUIRED or AUTH_REQUIRED).
]]
local TERMINAL = { TASK_STATE_COMPLETED = true, TASK_STATE_FAILED = true, TASK_STATE_CANCELED = true, TASK_STATE_REJECTED = true }
local INTERRUPTED = { TASK_STATE_INPUT_REQUIRED = true, TASK_STATE_AUTH_REQUIRED = true }
