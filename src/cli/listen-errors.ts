/**
 * A failure to listen, in terms of the variables that chose the address: Node's EADDRINUSE
 * message says neither whether PORT or METRICS_PORT is at fault nor what to change.
 */
import { ConfigError, type Config } from '../config/index.js';

interface SystemError extends Error {
  readonly code?: unknown;
  readonly syscall?: unknown;
  readonly address?: unknown;
  readonly port?: unknown;
  readonly hostname?: unknown;
}

export function explainListenError(error: unknown, config: Config): unknown {
  if (!(error instanceof Error)) return error;
  const failure: SystemError = error;
  const { code, port, address, hostname } = failure;
  // The metrics listener's variables, when the failing port or host is its own and not the API's.
  const metrics = config.metricsPort !== undefined && config.metricsPort !== config.port && port === config.metricsPort;
  const portName = metrics ? 'METRICS_PORT' : 'PORT';
  const hostName = metrics || (hostname === config.metricsHost && hostname !== config.host) ? 'METRICS_HOST' : 'HOST';
  const where = `${String(address)}:${String(port)}`;
  if (failure.syscall === 'getaddrinfo') {
    return new ConfigError(`${hostName}: cannot resolve the host name '${String(hostname)}' (${String(code)})`, {
      cause: error,
    });
  }
  // A worker of a multi-worker instance gets its primary's failure to bind the shared port (node:cluster).
  if (failure.syscall !== 'listen' && failure.syscall !== 'bind') return error;
  if (code === 'EADDRINUSE')
    return new ConfigError(
      `${portName}: ${where} is already in use (by another process?): choose another ${portName}`,
      { cause: error },
    );
  if (code === 'EACCES')
    return new ConfigError(`${portName}: no permission to listen on ${where} (ports below 1024 need privileges)`, {
      cause: error,
    });
  if (code === 'EADDRNOTAVAIL')
    return new ConfigError(`${hostName}: ${String(address)} is not an address of this machine`, { cause: error });
  return error;
}
