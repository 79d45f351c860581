package io.github.tenantintegration.generator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GenerateTest {
    private static final Path REPO = Generate.findRepo(Path.of("").toAbsolutePath());

    @Test
    void theCommittedApiModuleIsWhatTheContractGives() {
        assertEquals(List.of(), Generate.run(REPO, true));
    }

    @Test
    void theCheckNamesAStaleAMissingAndAnExtraFile(@TempDir Path temp) throws Exception {
        Path repo = temp.resolve("repo");
        Files.createDirectories(repo.resolve("spec/dist"));
        Files.copy(REPO.resolve("spec/dist/openapi.json"), repo.resolve("spec/dist/openapi.json"));
        Files.copy(REPO.resolve("spec/marks.mjs"), repo.resolve("spec/marks.mjs"));
        Generate.run(repo, false);
        Path out = repo.resolve(Generate.OUT);
        Files.writeString(out.resolve("Scope.java"), "// edited by hand\n", java.nio.file.StandardOpenOption.APPEND);
        Files.delete(out.resolve("User.java"));
        Files.writeString(out.resolve("Handwritten.java"), "class Handwritten {}\n");
        assertEquals(
                List.of("extra: Handwritten.java", "missing: User.java", "stale: Scope.java"),
                Generate.run(repo, true).stream().sorted().toList());
    }

    @Test
    void assumptionsFollowTheLabelOfMarksMjs() {
        String label = Generate.label(REPO);
        assertEquals("Assumption (not in the service description):", label);
        Map<String, String> files = Generate.files(Generate.read(REPO.resolve("spec/dist/openapi.json")), label);
        assertTrue(
                files.get("TokenType.java") == null && files.get("Schemas.java").contains("<b>" + label + "</b>"));
        assertTrue(files.get("RefreshTokenResponse.java").contains("<b>" + label + "</b>"));
        for (String text : files.values()) assertTrue(text.startsWith(Generate.HEADER));
    }

    @Test
    void descriptionsBecomeSafeJavadoc() {
        assertEquals(
                "Send <code>a &lt;b&gt;</code> &#64;param &#123;x&#125; *&#47; &amp; more",
                Javadoc.html("Send `a <b>`\n  @param {x} */ & more"));
        StringBuilder out = new StringBuilder();
        Javadoc.wrap("word ".repeat(40).trim(), " * ", " *   ", out);
        for (String line : out.toString().split("\n")) assertTrue(line.length() <= Javadoc.WIDTH, line);
    }

    @Test
    void namesFollowJavasConventions() {
        assertEquals("tokenTypeHint", Names.camel("token_type_hint"));
        assertEquals("CUSTOM_FIELDS_WRITE", Names.constant("custom-fields:write"));
        assertEquals("\"a\\\"b\\\\c\\n\\015\\u00e9\"", Names.literal("a\"b\\c\n\ré"));
    }
}
