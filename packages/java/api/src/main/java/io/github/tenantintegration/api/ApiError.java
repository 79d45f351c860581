// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * API error: The body of an API error. Its shape is not shown in the service description; the
 * machine-readable error is in the <code>WWW-Authenticate</code> header (RFC 6750 §3). Treat the
 * body as an open object.
 *
 * <p><b>Assumption (not in the service description):</b> The error body shape is not shown. RFC
 * 6750 §3 carries the error code in the WWW-Authenticate header and defines no body, so the body,
 * when there is one, is JSON of unknown fields.
 *
 * @param fields the JSON object's members, as parsed (unmodifiable; a JSON null is a null value)
 */
public record ApiError(Map<String, Object> fields) {
    /**
     * Checks that every required component is given, and keeps an unmodifiable copy of the map.
     *
     * @throws NullPointerException naming the first required component that is null
     */
    public ApiError {
        fields = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(fields, "fields")));
    }

    /** The member {@code name}, or null when it is absent (or JSON null). */
    public Object get(String name) {
        return fields.get(name);
    }
}
