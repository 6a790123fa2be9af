/** True when `root`/dist was built after the last change under `root`/src (or there is no src/). */
export function distIsCurrent(root: string): boolean;
