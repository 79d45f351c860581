package io.github.tenantintegration.tenanttest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's quick start compiles against the kit as it is. */
class ReadmeSampleTest {
    @TempDir
    Path dir;

    @Test
    void theQuickStartCompiles() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        Matcher block = Pattern.compile("```java\n(import [\\s\\S]*?public final class Quickstart[\\s\\S]*?)```")
                .matcher(readme);
        assertTrue(block.find(), "the README has the quick start");
        Path source = dir.resolve("Quickstart.java");
        Files.writeString(source, block.group(1));
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        boolean ok = compiler.getTask(
                        errors,
                        null,
                        null,
                        List.of(
                                "-classpath",
                                System.getProperty("java.class.path"),
                                "-d",
                                dir.toString(),
                                "-Xlint:all",
                                "-Werror"),
                        null,
                        compiler.getStandardFileManager(null, null, null).getJavaFileObjects(source))
                .call();
        assertEquals("", errors.toString());
        assertTrue(ok);
    }
}
