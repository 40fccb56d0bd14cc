export interface Served {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the files under `root` (an absolute path); `/` and folders serve their index.html, anything else is 404. */
export function serve(root: string): Promise<Served>;
