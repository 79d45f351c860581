package io.github.tenantintegration.spring;

import io.github.tenantintegration.tokenmanager.ReadmeSamples;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's Spring sample compiles against this module and Spring as they are. */
class ReadmeSampleTest {
    @TempDir
    Path dir;

    @Test
    void theSpringSampleCompiles() throws Exception {
        ReadmeSamples.assertCompiles("TenantClients", dir);
    }
}
