// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * User: The authenticated user. Its fields are not shown in the service description, so the record
 * is an open JSON object: read the fields you need defensively.
 *
 * @param fields the JSON object's members, as parsed (unmodifiable; a JSON null is a null value)
 */
public record User(Map<String, Object> fields) {
    /**
     * Checks that every required component is given, and keeps an unmodifiable copy of the map.
     *
     * @throws NullPointerException naming the first required component that is null
     */
    public User {
        fields = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(fields, "fields")));
    }

    /** The member {@code name}, or null when it is absent (or JSON null). */
    public Object get(String name) {
        return fields.get(name);
    }
}
