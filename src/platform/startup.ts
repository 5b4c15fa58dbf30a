/**
 * Checks made before anything is created: the data directory of embedded storage and the port. Each problem is one
 * line naming the setting and what to do (StartupError); main prints it without a stack trace.
 */
import { mkdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export class StartupError extends Error {}

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code ?? 'unknown';

/** DATA_DIR exists (or is created) as a directory this process can write; embedded storage only. */
export function checkDataDir(dataDir: string): void {
  let isDirectory: boolean | undefined;
  try {
    isDirectory = statSync(dataDir).isDirectory();
  } catch (error) {
    if (errno(error) !== 'ENOENT' && errno(error) !== 'ENOTDIR') throw cannotWrite(dataDir, error);
  }
  if (isDirectory === false) {
    throw new StartupError(`DATA_DIR ${dataDir} is a file, not a directory: move the file away or set DATA_DIR to a directory (created if missing).`);
  }
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const probe = join(dataDir, `.write-check-${process.pid}`);
    writeFileSync(probe, '');
    unlinkSync(probe);
  } catch (error) {
    if (errno(error) === 'ENOTDIR' || errno(error) === 'EEXIST') {
      throw new StartupError(`DATA_DIR ${dataDir} is under a file, not a directory: set DATA_DIR to a directory (created if missing).`);
    }
    throw cannotWrite(dataDir, error);
  }
}

const cannotWrite = (dataDir: string, error: unknown) =>
  new StartupError(`DATA_DIR ${dataDir} cannot be written (${errno(error)}): give this user write access to it or set DATA_DIR to a writable directory.`);

/** Whether host:port can be listened on, tried before the database is opened. */
export function checkPort(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error) => {
      const code = errno(error);
      if (code === 'EADDRINUSE') reject(new StartupError(`PORT ${port} is already in use on ${host}: stop the process that holds it or set PORT to a free port.`));
      else if (code === 'EACCES') reject(new StartupError(`PORT ${port} on ${host} needs privileges this user lacks: set PORT to 1024 or above.`));
      else if (code === 'EADDRNOTAVAIL') reject(new StartupError(`HOST ${host} is not an address of this machine: set HOST to one of its addresses (or 0.0.0.0).`));
      else reject(new StartupError(`PORT ${port} on ${host} cannot be listened on (${code}): set PORT and HOST to an address this process may use.`));
    });
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}
