import { packageConfig } from "@attngraph/vitest-config";
export default packageConfig();
