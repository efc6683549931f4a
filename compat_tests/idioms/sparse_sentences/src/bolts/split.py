from streamparse import Bolt, Stream


class SplitBolt(Bolt):
    outputs = [
        Stream(fields=["word", "n"], name="short"),
        Stream(fields=["word", "n"], name="long"),
    ]

    def process(self, tup):
        sentence, n = tup.values
        words = sentence.split()
        for word in words:
            self.emit([word, n], stream="short" if len(word) <= 4 else "long")
        self.logger.info("split sentence %d into %d words", n, len(words))
