package io.github.tenantintegration.tenanttest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.filestorage.FileStorage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Processes of one machine sharing a token file: one refresh per expiry, no refresh token presented twice. */
@Tag("process")
class FileFleetTest {
    @TempDir
    Path dir;

    @Test
    void sixJvmsReleasedAfterExpiryMakeOneRefresh() throws Exception {
        Path file = dir.resolve("tokens.json");
        try (Sandbox sandbox = Sandbox.start()) {
            TestTenant tenant = TestTenant.create(sandbox, builder -> builder.storage(FileStorage.of(file)), true);
            tenant.advance(Duration.ofMinutes(16));
            String java =
                    Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<Process> fleet = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                fleet.add(new ProcessBuilder(
                                java,
                                "-Xshare:auto",
                                "-XX:TieredStopAtLevel=1",
                                "-cp",
                                System.getProperty("java.class.path"),
                                FleetMember.class.getName(),
                                sandbox.url(),
                                tenant.clientId(),
                                tenant.redirectUri(),
                                file.toString(),
                                Long.toString(sandbox.clock().offset().toMillis()))
                        .redirectErrorStream(true)
                        .start());
            }
            for (Process member : fleet) {
                String out = new String(member.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(0, member.waitFor());
                assertTrue(out.contains("ok"), out);
            }
            assertEquals(1, tenant.refreshCount());
            assertTrue(tenant.ledger().noTokenPresentedTwice());
            assertTrue(tenant.ledger().reuses().isEmpty());
        }
    }
}
