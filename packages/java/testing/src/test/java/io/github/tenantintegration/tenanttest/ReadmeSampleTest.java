package io.github.tenantintegration.tenanttest;

import io.github.tenantintegration.tokenmanager.ReadmeSamples;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's quick start compiles against the kit as it is. */
class ReadmeSampleTest {
    @TempDir
    Path dir;

    @Test
    void theQuickStartCompiles() throws Exception {
        ReadmeSamples.assertCompiles("Quickstart", dir);
    }
}
