package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.internal.Json;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The refresh under way ({@code spec/token-store/intent-record.schema.json}): which refresh token (a
 * fingerprint), which refresh ({@code holder}), since when (ms, logged only: D1), and its writer's
 * pid and host. A value that does not validate is no intent.
 */
record IntentRecord(String fingerprint, String holder, long since, long pid, String host) {
    private static final Pattern FINGERPRINT = Pattern.compile("^[0-9a-f]{64}$");
    private static final Pattern HOST = Pattern.compile("^\\S+$");

    static Optional<IntentRecord> parse(String raw) {
        Optional<Map<String, Object>> members = Json.parseObject(raw);
        if (members.isEmpty()) return Optional.empty();
        Map<String, Object> m = members.get();
        for (String name : m.keySet()) {
            if (!name.equals("fingerprint")
                    && !name.equals("holder")
                    && !name.equals("since")
                    && !name.equals("pid")
                    && !name.equals("host")) return Optional.empty();
        }
        if (!(m.get("fingerprint") instanceof String fingerprint)
                || !FINGERPRINT.matcher(fingerprint).matches()) {
            return Optional.empty();
        }
        if (!(m.get("holder") instanceof String holder)
                || !TokenRecord.RECORD_ID.matcher(holder).matches()) {
            return Optional.empty();
        }
        if (!(m.get("since") instanceof Long since) || since < 0) return Optional.empty();
        long pid = 0;
        if (m.containsKey("pid")) {
            if (!(m.get("pid") instanceof Long given) || given < 1) return Optional.empty();
            pid = given;
        }
        String host = null;
        if (m.containsKey("host")) {
            if (!(m.get("host") instanceof String given) || !HOST.matcher(given).matches()) return Optional.empty();
            host = given;
        }
        return Optional.of(new IntentRecord(fingerprint, holder, since, pid, host));
    }

    /** {@code {"fingerprint":…,"holder":…,"since":…,"pid":…,"host":…}}: that order, no spaces. */
    String serialize() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("fingerprint", fingerprint);
        out.put("holder", holder);
        out.put("since", since);
        out.put("pid", pid > 0 ? pid : null);
        out.put("host", host);
        return Json.write(out);
    }

    /** Who holds it, for messages: "process 123 on host-a", or "another process". */
    String describe() {
        if (pid == 0) return "another process";
        return "process " + pid + " on " + (host == null ? "an unknown host" : host);
    }
}
