package io.github.tenantintegration.filestorage;

import java.nio.file.FileSystems;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** The modes of what the file storage makes: 0700 directories, 0600 files (where the file system has POSIX modes). */
final class Modes {
    static final boolean POSIX =
            FileSystems.getDefault().supportedFileAttributeViews().contains("posix");

    static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
    static final Set<PosixFilePermission> OWNER_ONLY_DIRECTORY = PosixFilePermissions.fromString("rwx------");

    static final FileAttribute<?>[] DIRECTORY = POSIX
            ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIRECTORY)}
            : new FileAttribute<?>[0];
    static final FileAttribute<?>[] FILE = POSIX
            ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE)}
            : new FileAttribute<?>[0];

    private Modes() {}

    /** A mode as four octal digits, e.g. {@code 0644}. */
    static String octal(Set<PosixFilePermission> permissions) {
        int mode = 0;
        for (PosixFilePermission p : permissions) mode |= 1 << (8 - p.ordinal());
        return String.format("%04o", mode);
    }
}
