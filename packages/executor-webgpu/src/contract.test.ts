import { describeExecutorContract } from "@attngraph/testkit/contract";
import { createWebGpuExecutor } from "./index.js";

describeExecutorContract("webgpu", () => createWebGpuExecutor());
