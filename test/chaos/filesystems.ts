/**
 * Small, real file systems to put a database on and then break: a size-limited
 * tmpfs (to fill it), and a loop-mounted ext4 image mounted errors=remount-ro
 * (to make it go read-only under a running process, as a failing disk does).
 * Both need root and mount(2); when the environment forbids them the callers skip
 * with one loud line.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, appendFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

function run(command: string, args: string[]): { ok: boolean; output: string } {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  return {
    ok: result.status === 0,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}`.trim(),
  };
}

export interface MountedFs {
  readonly dir: string;
  unmount(): void;
}

export type Mounted<T extends MountedFs> = T | { readonly skip: string };

/** A tmpfs of `sizeBytes` bytes at a fresh directory. */
export function mountTmpfs(sizeBytes: number): Mounted<MountedFs> {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-tmpfs-'));
  const mounted = run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir]);
  if (!mounted.ok) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `cannot mount a tmpfs here (${mounted.output || 'mount failed'})` };
  }
  return {
    dir,
    unmount() {
      run('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the file system holding `dir` until it reports ENOSPC; returns the filler's path. */
export function fillDisk(dir: string): string {
  const path = join(dir, 'filler');
  writeFileSync(path, '');
  const chunk = Buffer.alloc(16 * 1024);
  for (;;) {
    try {
      appendFileSync(path, chunk);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
      throw error;
    }
  }
  // Then the last few bytes, in smaller pieces.
  for (const size of [4096, 512, 1]) {
    try {
      for (;;) appendFileSync(path, Buffer.alloc(size));
    } catch {
      // full at this granularity
    }
  }
  return path;
}

export function freeDisk(fillerPath: string): void {
  unlinkSync(fillerPath);
}

export interface Ext4Image extends MountedFs {
  /** Makes the kernel remount it read-only at once, as on a disk error (open files stay open). */
  failToReadOnly(): void;
  readonly isReadOnly: boolean;
  /** Unmounts, checks (e2fsck) and mounts it again read-write, as an operator would. */
  repair(): void;
}

/** An ext4 image of `sizeMb` MB, loop-mounted at a fresh directory with errors=remount-ro. */
export function mountExt4Image(sizeMb: number): Mounted<Ext4Image> {
  const work = mkdtempSync(join(tmpdir(), 'plantstore-ext4-'));
  const image = join(work, 'disk.img');
  const dir = join(work, 'mnt');
  const cleanup = () => rmSync(work, { recursive: true, force: true });
  if (!run('truncate', ['-s', `${sizeMb}M`, image]).ok) {
    cleanup();
    return { skip: 'cannot create a disk image' };
  }
  const made = run('mkfs.ext4', ['-q', '-F', '-m', '0', image]);
  if (!made.ok) {
    cleanup();
    return { skip: `mkfs.ext4 is not available (${made.output})` };
  }
  run('mkdir', ['-p', dir]);
  const mount = () => run('mount', ['-o', 'loop,errors=remount-ro', image, dir]);
  const mounted = mount();
  if (!mounted.ok) {
    cleanup();
    return { skip: `cannot loop-mount an ext4 image here (${mounted.output || 'mount failed'})` };
  }
  const device = () => basename(run('findmnt', ['-n', '-o', 'SOURCE', dir]).output);
  const trigger = `/sys/fs/ext4/${device()}/trigger_fs_error`;
  try {
    writeFileSync(join(dir, '.probe'), '');
    unlinkSync(join(dir, '.probe'));
  } catch (error) {
    run('umount', [dir]);
    cleanup();
    return { skip: `the ext4 image is not writable (${(error as Error).message})` };
  }
  return {
    dir,
    failToReadOnly() {
      writeFileSync(trigger, 'plantstore storage-fault test');
    },
    get isReadOnly() {
      return /(^|,)ro(,|$)|emergency_ro/.test(run('findmnt', ['-n', '-o', 'OPTIONS', dir]).output);
    },
    repair() {
      const unmounted = run('umount', [dir]);
      if (!unmounted.ok) throw new Error(`umount failed: ${unmounted.output}`);
      run('e2fsck', ['-f', '-y', image]); // exit status 1 means "errors corrected"
      const again = mount();
      if (!again.ok) throw new Error(`mount after repair failed: ${again.output}`);
    },
    unmount() {
      run('umount', ['-l', dir]);
      cleanup();
    },
  };
}
