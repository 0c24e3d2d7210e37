print("kinesia")
