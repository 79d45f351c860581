package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * The Java samples of packages/java/README.md, compiled against the kit as it is (with the test's class
 * path, every warning an error): what the modules' README sample tests share, a test fixture
 * (src/testFixtures) compiled with their tests.
 */
public final class ReadmeSamples {
    private ReadmeSamples() {}

    /** The README's {@code java} block (never spanning two) that declares {@code public final class <className>}. */
    public static String sample(String className) throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"));
        Matcher block = Pattern.compile("```java\n(import (?:(?!```)[\\s\\S])*?public final class " + className
                        + "\\b(?:(?!```)[\\s\\S])*?)```")
                .matcher(readme);
        assertTrue(block.find(), "the README has the sample " + className);
        return block.group(1);
    }

    /** Asserts that the README's sample {@code className} compiles, into {@code dir}. */
    public static void assertCompiles(String className, Path dir) throws IOException {
        Path source = dir.resolve(className + ".java");
        Files.writeString(source, sample(className));
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
