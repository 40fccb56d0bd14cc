// The consumer page's Vite config: nothing attngraph-specific (no aliases), as a user would start with.
export default { base: "./", build: { outDir: "dist", target: "es2022" } };
