package io.github.tenantintegration.tokenmanager;

/**
 * A storage's or a lock's failure, naming the file or key it concerns: {@code FILE_CORRUPT},
 * {@code FILE_UNSAFE}, {@code IO_FAILED}, {@code LOCK_TIMEOUT} (file storage); {@code COMMAND_FAILED},
 * {@code UNEXPECTED_REPLY}, {@code REPLICATION_TIMEOUT}, {@code LOCK_UNAVAILABLE}, {@code LEASE_LOST},
 * {@code LOCK_TIMEOUT} (Redis). The manager reports it as {@code STORAGE_FAILED} with this as the
 * cause (a {@code LOCK_TIMEOUT} as itself). For storages and locks written outside the kit too.
 */
public class StorageException extends TokenManagerException {
    private static final long serialVersionUID = 1L;

    private final String path;
    private final String movedTo;
    private final boolean reset;

    /**
     * A storage's failure.
     *
     * @param code its code
     * @param path the file, lock or key it concerns, or null
     * @param message why (naming the path; never a value)
     * @param cause the cause, or null
     */
    public StorageException(ErrorCode code, String path, String message, Throwable cause) {
        this(code, path, message, cause, null, false);
    }

    /**
     * A storage's failure that set its data aside.
     *
     * @param code its code
     * @param path the file, lock or key it concerns, or null
     * @param message why (naming the path; never a value)
     * @param cause the cause, or null
     * @param movedTo where an unreadable file was moved, or null
     * @param reset whether the storage set its data aside, so that every key now reads as absent (the
     *     manager then reports {@code NOT_SIGNED_IN} with this as the cause)
     */
    public StorageException(
            ErrorCode code, String path, String message, Throwable cause, String movedTo, boolean reset) {
        super(code, message, cause);
        this.path = path;
        this.movedTo = movedTo;
        this.reset = reset;
    }

    /** The file, lock or key this concerns, or null. */
    public String path() {
        return path;
    }

    /** Where a {@code FILE_CORRUPT} file was moved, or null. */
    public String movedTo() {
        return movedTo;
    }

    /** Whether the storage set its data aside: every key reads as absent now. */
    public boolean reset() {
        return reset;
    }
}
