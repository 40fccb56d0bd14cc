import { describeExecutorContract } from "@attngraph/testkit/contract";
import { createWasmExecutor } from "./index.js";

describeExecutorContract("wasm", () => createWasmExecutor());
