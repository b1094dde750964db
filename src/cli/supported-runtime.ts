/**
 * The oldest Node.js line the service runs on: below it better-sqlite3 13 (Node-API 10) dies
 * with a segmentation fault at its first query, so the command refuses to start and says why.
 */
export const MINIMUM_NODE_MAJOR = 22;

/** Why this runtime cannot run the service, or undefined when it can. */
export function unsupportedRuntime(nodeVersion: string = process.versions.node): string | undefined {
  const major = Number(nodeVersion.split('.')[0]);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  return (
    `Node.js ${nodeVersion} is not supported: run Plant Store on Node.js 22 or 24 ` +
    '(in this repository, `npm start` and `npm test` use the Node.js 24 that `npm ci` installs)'
  );
}
