package io.github.tenantintegration.filestorage;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.Map;

/**
 * The errno name of a file system failure ({@code EROFS}, {@code ENOSPC}, …), for messages that say
 * why the way the other kits' do. The JDK gives no errno: it is read from the exception's class and
 * from its reason, the system's {@code strerror} text.
 */
final class Errno {
    private static final Map<String, String> REASONS = Map.ofEntries(
            Map.entry("Read-only file system", "EROFS"),
            Map.entry("No space left on device", "ENOSPC"),
            Map.entry("Disk quota exceeded", "EDQUOT"),
            Map.entry("Permission denied", "EACCES"),
            Map.entry("Operation not permitted", "EPERM"),
            Map.entry("Input/output error", "EIO"),
            Map.entry("Is a directory", "EISDIR"),
            Map.entry("Not a directory", "ENOTDIR"),
            Map.entry("No such file or directory", "ENOENT"),
            Map.entry("File exists", "EEXIST"),
            Map.entry("Too many levels of symbolic links", "ELOOP"));

    private Errno() {}

    /** The errno name, or {@code error} when it cannot be told. */
    static String name(IOException e) {
        String reason = e instanceof FileSystemException fs && fs.getReason() != null ? fs.getReason() : e.getMessage();
        if (reason != null) {
            for (Map.Entry<String, String> entry : REASONS.entrySet()) {
                if (reason.contains(entry.getKey())) return entry.getValue();
            }
        }
        if (e instanceof AccessDeniedException) return "EACCES";
        if (e instanceof NoSuchFileException) return "ENOENT";
        if (e instanceof FileAlreadyExistsException) return "EEXIST";
        if (e instanceof DirectoryNotEmptyException) return "ENOTEMPTY";
        if (e instanceof NotDirectoryException) return "ENOTDIR";
        if (e instanceof FileSystemLoopException) return "ELOOP";
        return "error";
    }

    /** Errors of mkdir that mean "no lock can be made here", not "someone holds it". */
    static boolean cannotCreate(IOException e) {
        String name = name(e);
        return name.equals("EROFS")
                || name.equals("EACCES")
                || name.equals("EPERM")
                || name.equals("ENOSPC")
                || name.equals("EDQUOT");
    }
}
