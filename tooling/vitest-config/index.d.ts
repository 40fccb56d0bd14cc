import type { UserWorkspaceConfig } from "vitest/config";
export declare function packageConfig(extra?: UserWorkspaceConfig): UserWorkspaceConfig;
